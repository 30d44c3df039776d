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
set label 2 'MACHINE LOADED: other processes used 89% of the CPUs while it measured (median)' at graph 0.02,0.95 left textcolor rgb '#c00000'
set label 3 'load average up to 16.29 on 2 cores: thread scaling measured this way says little' at graph 0.02,0.89 left textcolor rgb '#c00000'
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
set bmargin 10
set border 3
set tics nomirror
set logscale y
set format y '%.0s%c'
set format y '%g'
set xrange [0.5:6.5]
set xtics rotate by -30 font ',10'
set terminal svg size 900,656 dynamic noenhanced font 'sans,13' background rgb 'white'
set output 'history.svg'
plot 'gnuplot/history.0.dat' using 1:2:3:4:xtic(5) with yerrorlines lw 2 pt 5 ps 1.2 lc rgb '#d62728' title 'fast_cpu / reference (the gated pair, CPU time)', \
     'gnuplot/history.1.dat' using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc rgb '#1f77b4' title 'fast_cpu / numba, every core each (largest common sweep)', \
     'gnuplot/history.2.dat' using 1:2:3:4 with yerrorlines lw 2 pt 9 ps 1.2 lc rgb '#2ca02c' title 'fast_cpu / numba, one thread each', \
     'gnuplot/history.3.dat' using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#c00000' title 'machine loaded (others used > 25% of the CPUs, or load > cores)'
set output
set terminal @pngterm size 900,656 noenhanced
set output 'history.png'
replot
set output
