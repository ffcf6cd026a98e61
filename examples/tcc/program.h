/* SPDX-License-Identifier: MIT */
/* The C program the examples compile with libtcc, one function per
 * source (tcc_jit.c says why): main -> run -> tcc_outer -> tcc_mid ->
 * tcc_leaf, which spins n rounds and, when asked, calls the host's
 * tcc_probe (a backtrace, a breakpoint, a C++ throw). */
#ifndef TCC_PROGRAM_H
#define TCC_PROGRAM_H

static const char *const tcc_program[][2] = {
    {"tcc_leaf", "void tcc_probe(void);\n"
                 "int tcc_leaf(int n, int probe)\n"
                 "{\n"
                 "    unsigned a = 1;\n"
                 "    int i;\n"
                 "    for (i = 0; i < n; i++)\n"
                 "        a = a * 1103515245u + 12345u + (a >> 7);\n"
                 "    if (probe)\n"
                 "        tcc_probe();\n"
                 "    return (int)(a & 0x7fffffff);\n"
                 "}\n"},
    {"tcc_mid", "int tcc_leaf(int n, int probe);\n"
                "int tcc_mid(int n, int probe) { return tcc_leaf(n, probe) + 1; }\n"},
    {"tcc_outer", "int tcc_mid(int n, int probe);\n"
                  "int tcc_outer(int n, int probe) { return tcc_mid(n, probe) + 1; }\n"},
};
#define TCC_PROGRAM_FNS (sizeof tcc_program / sizeof tcc_program[0])

#endif
