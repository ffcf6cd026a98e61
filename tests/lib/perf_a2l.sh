# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# perf_a2l ARGS...: run perf with SIGPIPE ignored, for the commands that ask
# addr2line for source lines (--sort srcline, -F srcline).
#
# perf 6.1 (Debian 12) keeps one addr2line child per DSO.  When that child
# exits at once (it cannot read the file, as for the "//anon" DSO that an
# ASan process's call chains reach), perf warns "could not read first
# record" and keeps the dead child; its next request writes to a pipe with
# no reader and SIGPIPE kills perf silently, exit status 141, with only the
# two header lines of the report written.  Ignored, that write fails with
# EPIPE, perf warns "could not send request" and finishes the report.
# (Checked with an addr2line that exits at once: 141 and 2 lines without
# this, a full report with it.)
perf_a2l() { (trap '' PIPE && exec perf "$@"); }
