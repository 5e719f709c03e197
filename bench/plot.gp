# plot.gp -- throughput against client threads, dal and direct, from the
# threads.dat that bench/compare.sh writes.  bench/plot.sh runs it:
#   gnuplot -e "datafile='threads.dat'; outfile='throughput.png'" bench/plot.gp
if (!exists("datafile")) datafile = 'threads.dat'
if (!exists("outfile")) outfile = 'throughput.png'
set terminal pngcairo size 800,500 font ",11"
set output outfile
set title "point-select by shard key, 4 MariaDB nodes on loopback (median of alternating rounds)"
set xlabel "client threads"
set ylabel "statements per second"
set key top left
set grid
set yrange [0:*]
set xtics 1
plot datafile using 1:2 with linespoints lw 2 pt 7 title "through dal", \
     datafile using 1:3 with linespoints lw 2 pt 5 title "plain libmysqlclient (direct)"
