/* SPDX-License-Identifier: MIT */
/* perftramp: the command-line tool.  Two jobs: show what an architecture
 * table emits (for porters) and validate jitdump files from any producer
 * (for runtime authors).  See docs/perftramp.1. */
#include "cli.h"

#include "config.h"

#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: perftramp COMMAND [ARGS]\n"
            "\n"
            "  perftramp arch                     list the built-in architecture tables\n"
            "  perftramp arch NAME [--raw DIR]    show NAME's trampoline: instructions, CFA and\n"
            "                                     register rules at every offset, the emitted\n"
            "                                     .eh_frame and .eh_frame_hdr in hex, decoded;\n"
            "                                     --raw writes code.bin, eh_frame.bin,\n"
            "                                     eh_frame_hdr.bin, trampoline.o (ELF) and rows.txt\n"
            "  perftramp check [--json] [--all] [--records] [--perf-version X.Y]\n"
            "                  [--timeout SECONDS] FILE...\n"
            "                                     validate jitdump files (any producer, - for\n"
            "                                     standard input) against what perf will do;\n"
            "                                     --records lists every record with its offset\n"
            "  perftramp clean [DIR]              remove the ELF arena files (PERFTRAMP_ELF) of\n"
            "                                     processes that are gone (DIR: $PERFTRAMP_ELF_DIR,\n"
            "                                     else /tmp/perftramp-<uid>)\n"
            "  perftramp cfi FILE [SYMBOL|ADDR]   print the FDE covering SYMBOL or ADDR (every FDE\n"
            "                                     without one) of a linked ELF file as\n"
            "                                     struct perftramp_cfi rows for perftramp_publish\n"
            "  perftramp --help | --version\n"
            "\n"
            "check exit status: 0 every file valid, 1 a file is invalid, 2 usage or I/O error.\n"
            "See perftramp(1).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("perftramp %s\n", PACKAGE_VERSION);
        return CLI_OK;
    }
    if (strcmp(cmd, "arch") == 0)
        return cli_arch_main(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0)
        return cli_check_main(argc - 1, argv + 1);
    if (strcmp(cmd, "clean") == 0)
        return cli_clean_main(argc - 1, argv + 1);
    if (strcmp(cmd, "cfi") == 0)
        return cli_cfi_main(argc - 1, argv + 1);
    fprintf(stderr, "perftramp: unknown command '%s'\n", cmd);
    usage(stderr);
    return CLI_USAGE;
}
