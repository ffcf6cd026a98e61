/* SPDX-License-Identifier: MIT */
/* The perftramp command: subcommands and the display helpers they share. */
#ifndef PERFTRAMP_CLI_H
#define PERFTRAMP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "read/eh_decode.h"
#include "arch/table.h"

/* Exit codes of every subcommand. */
enum { CLI_OK = 0, CLI_INVALID = 1, CLI_USAGE = 2 };

int cli_arch_main(int argc, char **argv);
int cli_check_main(int argc, char **argv);
/* perftramp clean [DIR]: ELF arena files of processes that are gone. */
int cli_clean_main(int argc, char **argv);
int cli_cfi_main(int argc, char **argv); /* tools/cli_cfi.c */

/* Classic hex dump: `indent`, offset (plus `base`), 16 bytes a line. */
void cli_hexdump(FILE *out, const char *indent, const uint8_t *p, size_t n, uint64_t base);

/* A DWARF register name: the table's name when it has one, else "rN".
 * `a` may be NULL.  Returns a pointer to a static buffer or the name. */
const char *cli_reg_name(const struct pt_arch *a, uint64_t reg, char buf[24]);

/* One rule as readelf -wF spells it: "c-16", "u", "s", "r5", "exp", "v+8". */
void cli_rule_text(const struct pt_arch *a, const struct pt_reg_rule *r, char *out, size_t n);

/* The EHABI entries of a table whose unwinder reads them (tools/cli_ehabi.c),
 * each set beside the .eh_frame row (rows, decoded) over its region. */
struct pt_layout;
void cli_ehabi_print(FILE *out, const struct pt_layout *l, const struct pt_row *rows, int n_rows);

/* Disassembles a call frame program, one op a line. */
void cli_cfa_print(FILE *out, const char *indent, const struct pt_arch *a, const uint8_t *p, size_t len,
                   bool big_endian, uint64_t code_align, int64_t data_align);

#endif
