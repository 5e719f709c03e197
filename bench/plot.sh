#!/usr/bin/env bash
# plot.sh -- PNG of throughput against client threads, dal and direct.
#
#   bench/plot.sh THREADS.DAT [OUT.png]
#
# THREADS.DAT is what bench/compare.sh writes; OUT.png defaults to
# throughput.png next to it.  Needs gnuplot (Debian: apt-get install
# gnuplot-nox).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 THREADS.DAT [OUT.png]" >&2; exit 2; }
data=$1
png=${2:-$(dirname "$data")/throughput.png}
[ -f "$data" ] || { echo "plot.sh: no file $data (run bench/compare.sh first)" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot not found (Debian: apt-get install gnuplot-nox)" >&2; exit 1; }
gnuplot -e "datafile='$data'; outfile='$png'" "$here/plot.gp"
echo "$png"
