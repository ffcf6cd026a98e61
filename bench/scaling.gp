# SPDX-License-Identifier: MIT
# `make bench-plot`: bench/scaling.dat (bench/run.sh, from bench_scaling)
# -> bench/scaling.svg.  Columns: live trampolines, ns per wrap over the
# fill, ns per wrap at that count, resident bytes per trampoline, ns per
# unwind step.  Call as: gnuplot -e "dat='...'; svg='...'" bench/scaling.gp
set terminal svg size 900,360 dynamic font "sans,11"
set output svg
set multiplot layout 1,3 title "perftramp scaling: live trampolines (log scale)"
set logscale x
set format x "10^{%L}"
set xlabel "live trampolines"
set grid
set key top right
set title "wrap time"
set ylabel "ns per wrap"
set logscale y
plot dat using 1:2 with linespoints title "mean over the fill", \
     dat using 1:3 with linespoints title "at that count"
unset logscale y
set title "resident memory"
set ylabel "bytes per trampoline"
set logscale y
plot dat using 1:4 with linespoints title "resident / live"
unset logscale y
set title "unwind step (libgcc)"
set ylabel "ns per step"
set yrange [0:*]
plot dat using 1:5 with linespoints title "through the newest trampoline"
unset multiplot
