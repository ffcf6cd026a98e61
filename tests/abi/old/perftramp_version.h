/* SPDX-License-Identifier: MIT */
/* The version of the perftramp headers, from configure (AC_INIT).
 * perftramp_version() returns the library's, which may be newer (the ABI
 * policy in docs/abi.md says what a newer library keeps working). */
#ifndef PERFTRAMP_VERSION_H
#define PERFTRAMP_VERSION_H

#define PERFTRAMP_VERSION "0.1.0"
#define PERFTRAMP_VERSION_MAJOR 0
#define PERFTRAMP_VERSION_MINOR 1
#define PERFTRAMP_VERSION_PATCH 0
/* 0xMMmmpp, for #if PERFTRAMP_VERSION_NUMBER >= 0x000200 */
#define PERFTRAMP_VERSION_NUMBER \
    ((PERFTRAMP_VERSION_MAJOR << 16) | (PERFTRAMP_VERSION_MINOR << 8) | PERFTRAMP_VERSION_PATCH)

#endif
