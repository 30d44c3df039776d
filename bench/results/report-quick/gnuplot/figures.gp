# The report's figures. Run from the report folder: gnuplot gnuplot/figures.gp
# pngcairo draws smoother PNGs; gnuplot-nox may only have libgd's png.
pngterm = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0 ? 'pngcairo' : 'png'

# ---- throughput_vs_combos
reset
set title 'Backtests per second vs combos in one sweep (median; bars: min-max of the repetitions)'
set xlabel 'combos in the sweep (log scale)'
set ylabel 'backtests (combos) per second (log scale)'
set grid
set key outside below center Left reverse box maxcols 1
set bmargin 11
set border 3
set tics nomirror
set label 2 'MEASURED UNDER LOAD: 9 of 9 points, others used up to 82% of the CPUs' at graph 0,1.02 left textcolor rgb '#c00000'
set tmargin 5
set logscale x
set format x '%.0s%c'
set logscale y
set format y '%.0s%c'
set terminal svg size 900,680 dynamic noenhanced font 'sans,13' background rgb 'white'
set output 'throughput_vs_combos.svg'
plot 'gnuplot/throughput_vs_combos.0.dat' using 1:2:3:4 with yerrorlines lw 2 pt 5 ps 1.2 lc rgb '#d62728' title 'reference (152832 bars)', \
     'gnuplot/throughput_vs_combos.1.dat' using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb '#1f77b4' title 'fast_cpu (152832 bars, every core)', \
     'gnuplot/throughput_vs_combos.2.dat' using 1:2:3:4 with yerrorlines lw 2 pt 9 ps 1.2 lc rgb '#2ca02c' title 'fast_cpu (152832 bars, 1 thread)', \
     'gnuplot/throughput_vs_combos.3.dat' using 1:2:3:4 with yerrorlines lw 2 pt 11 ps 1.2 lc rgb '#9467bd' title 'numba peer (152832 bars, every core)', \
     'gnuplot/throughput_vs_combos.4.dat' using 1:2:3:4 with yerrorlines lw 2 pt 5 ps 1.2 lc rgb '#ff7f0e' title 'numba peer (152832 bars, 1 thread)'
set output
set terminal @pngterm size 900,680 noenhanced
set output 'throughput_vs_combos.png'
replot
set output

# ---- throughput_vs_bars
reset
set title 'Bar-combos per second vs bars in the series (median; bars: min-max)'
set xlabel 'bars in the series (log scale)'
set ylabel 'bar-combos per second (log scale)'
set grid
set key outside below center Left reverse box maxcols 1
set bmargin 8
set border 3
set tics nomirror
set label 2 'MEASURED UNDER LOAD: 7 of 7 points, others used up to 84% of the CPUs' at graph 0,1.02 left textcolor rgb '#c00000'
set tmargin 5
set logscale x
set format x '%.0s%c'
set logscale y
set format y '%.0s%c'
set terminal svg size 900,608 dynamic noenhanced font 'sans,13' background rgb 'white'
set output 'throughput_vs_bars.svg'
plot 'gnuplot/throughput_vs_bars.0.dat' using 1:2:3:4 with yerrorlines lw 2 pt 5 ps 1.2 lc rgb '#d62728' title 'reference (4 combos per sweep)', \
     'gnuplot/throughput_vs_bars.1.dat' using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb '#1f77b4' title 'fast_cpu (4 combos per sweep, every core)'
set output
set terminal @pngterm size 900,608 noenhanced
set output 'throughput_vs_bars.png'
replot
set output

# ---- ratios_within_run
reset
set title 'How many times faster, measured side by side in this run (one line per family)'
set xlabel 'work per sweep, bars x combos (log scale)'
set ylabel 'times faster (x, log scale)'
set grid
set key outside below center Left reverse box maxcols 1
set bmargin 11
set border 3
set tics nomirror
set label 2 'MEASURED UNDER LOAD: 18 of 18 points, others used up to 84% of the CPUs' at graph 0,1.02 left textcolor rgb '#c00000'
set tmargin 5
set logscale x
set format x '%.0s%c'
set logscale y
set format y '%.0s%c'
set format y '%g'
set terminal svg size 900,680 dynamic noenhanced font 'sans,13' background rgb 'white'
set output 'ratios_within_run.svg'
plot 'gnuplot/ratios_within_run.0.dat' using 1:2:3:4 with yerrorlines lw 2 pt 5 ps 1.2 lc rgb '#d62728' title 'fast_cpu / reference, more combos (152832 bars)', \
     'gnuplot/ratios_within_run.1.dat' using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb '#1f77b4' title 'fast_cpu / reference, more bars (4 combos)', \
     'gnuplot/ratios_within_run.2.dat' using 1:2:3:4 with yerrorlines lw 2 pt 9 ps 1.2 lc rgb '#2ca02c' title 'fast_cpu / numba (152832 bars, every core each)', \
     'gnuplot/ratios_within_run.3.dat' using 1:2:3:4 with yerrorlines lw 2 pt 11 ps 1.2 lc rgb '#9467bd' title 'fast_cpu / numba (152832 bars, 1 thread each)', \
     'gnuplot/ratios_within_run.4.dat' using 1:2:3:4 with yerrorlines lw 2 pt 5 ps 1.2 lc rgb '#ff7f0e' title 'fast_cpu / reference, 1 thread each, CPU time (the gated pair)'
set output
set terminal @pngterm size 900,680 noenhanced
set output 'ratios_within_run.png'
replot
set output

# ---- thread_scaling
reset
set title 'Thread scaling of one sweep (median; bars: min-max)'
set xlabel 'threads'
set ylabel 'speed-up over 1 thread (x)'
set grid
set key outside below center Left reverse box maxcols 1
set bmargin 8
set border 3
set tics nomirror
set label 2 'MEASURED UNDER LOAD: 2 of 2 points, others used up to 80% of the CPUs' at graph 0,1.02 left textcolor rgb '#c00000'
set tmargin 5
set xtics 1
set xrange [0.8:2.2]
set yrange [0:*]
set terminal svg size 900,608 dynamic noenhanced font 'sans,13' background rgb 'white'
set output 'thread_scaling.svg'
plot 'gnuplot/thread_scaling.0.dat' using 1:2:3:4 with yerrorlines lw 2 pt 5 ps 1.2 lc rgb '#d62728' title 'fast_cpu (1k combos)', \
     x with lines dt 2 lc rgb 'gray40' title 'ideal (linear)'
set output
set terminal @pngterm size 900,608 noenhanced
set output 'thread_scaling.png'
replot
set output

# ---- history
reset
set title 'History: within-run ratios, one point per report (oldest first)'
set xlabel 'report (oldest first; commit)'
set ylabel 'times faster (x, log scale)'
set grid
set key outside below center Left reverse box maxcols 1
set bmargin 6
set border 3
set tics nomirror
set logscale y
set format y '%.0s%c'
set format y '%g'
unset logscale
set xrange [0:1]
set yrange [0:1]
unset key
set label 1 'no history yet: each new report appends one point' at graph 0.5,0.5 center
set terminal svg size 900,560 dynamic noenhanced font 'sans,13' background rgb 'white'
set output 'history.svg'
plot 2 notitle
set output
set terminal @pngterm size 900,560 noenhanced
set output 'history.png'
replot
set output

# ---- big_sweeps
reset
set title 'Big sweeps: end-to-end seconds vs combos (median of the repetitions; bench/run_big_sweeps.sh)'
set xlabel 'combos in the sweep (log scale)'
set ylabel 'end-to-end seconds (log scale)'
set grid
set key outside below center Left reverse box maxcols 1
set border 3
set tics nomirror
set logscale xy
set format x '%.0s%c'
set format y '%g'
set bmargin 14
set terminal svg size 900,752 dynamic noenhanced font 'sans,13' background rgb 'white'
set output 'big_sweeps.svg'
plot 'gnuplot/big_sweeps.0.dat' using 1:2 with linespoints lw 2 pt 5 ps 1.2 lc rgb '#d62728' title 'sebt 68ad0fb csv, 2 threads', \
     'gnuplot/big_sweeps.1.dat' using 1:2 with linespoints lw 2 pt 7 ps 1.2 lc rgb '#1f77b4' title 'sebt 68ad0fb json, 2 threads', \
     'gnuplot/big_sweeps.2.dat' using 1:2 with linespoints lw 2 pt 9 ps 1.2 lc rgb '#2ca02c' title 'sebt 68ad0fb npy, 2 threads', \
     'gnuplot/big_sweeps.3.dat' using 1:2 with linespoints lw 2 pt 11 ps 1.2 lc rgb '#9467bd' title 'numba peer, 2 threads', \
     'gnuplot/big_sweeps.4.dat' using 1:2 with linespoints lw 2 pt 5 ps 1.2 lc rgb '#ff7f0e' title 'sebt 68ad0fb, series cached csv, 2 threads', \
     'gnuplot/big_sweeps.5.dat' using 1:2 with linespoints lw 2 pt 7 ps 1.2 lc rgb '#8c564b' title 'older sebt (OLD) csv, 2 threads', \
     'gnuplot/big_sweeps.6.dat' using 1:2 with linespoints lw 2 pt 9 ps 1.2 lc rgb '#e377c2' title 'older sebt (OLD) json, 2 threads', \
     'gnuplot/big_sweeps.7.dat' using 1:2 with linespoints lw 2 pt 11 ps 1.2 lc rgb '#7f7f7f' title 'older sebt (OLD) npy, 2 threads'
set output
set terminal @pngterm size 900,752 noenhanced
set output 'big_sweeps.png'
replot
set output
