#!/usr/bin/env bash
# threads.sh -- libdal's statement path with more threads than cores:
# bench/session_bench's point selects (one session a thread, one server,
# pass-through) at T threads under `taskset -c CPUS`, rounds alternating
# with a second session_bench (another build) when --baseline names one;
# and, with --count, what each statement writes that every thread shares:
# callgrind's call counts (valgrind runs the threads one at a time, so the
# counts are exact) of the functions that do such writes, per statement
# (the difference of two runs, N and 2N statements a thread, over N * T).
#
#   bench/threads.sh [--threads T] [--cpus LIST] [--statements N] [--rounds R]
#                    [--baseline SESSION_BENCH] [--count] [--sql SQL]
#
# Defaults: 16 threads on CPUs 0,1, 2,000 statements a thread, 3 rounds,
# `SELECT c FROM sbtest1 WHERE id = ?` on a 10,000-row sysbench table.
# SESSION_BENCH is a session_bench binary; its libdal is found as the
# program's own (libtool's .libs/ next to it, or LD_LIBRARY_PATH).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
threads=16 cpus=0,1 n=2000 rounds=3 baseline="" count=0
sql='SELECT c FROM sbtest1 WHERE id = ?'
bench_options "--threads=threads --cpus=cpus --statements=n --rounds=rounds --baseline=baseline
    --count --sql=sql" "$@"
bench_need taskset util-linux
[ "$count" = 0 ] || bench_need valgrind valgrind
bench_harness
bench=$builddir/bench/session_bench

px_cluster 1 --db sbtest
bench_sb_prepare "${ports[0]}" sbtest
cat >"$work/dal.ini" <<EOF
[datasource ds0]
master = mysql://dal:dalpass@127.0.0.1:${ports[0]}/sbtest
[dal]
default_datasource = ds0
EOF

one() { # PROGRAM -> ns per statement
    taskset -c "$cpus" "$1" -c "$work/dal.ini" --threads "$threads" --statements "$n" --sql "$sql" |
        awk '{print $2}'
}
if [ "$rounds" -gt 0 ]; then
    for r in $(seq "$rounds"); do
        line="round $r: $(one "$bench") ns a statement"
        [ -z "$baseline" ] || line="$line, baseline $(one "$baseline") ns"
        echo "$line ($threads threads on CPUs $cpus, $n statements a thread)"
    done
fi
[ "$count" = 1 ] || exit 0

# the functions whose every call writes a cache line other threads write
# too (or, for the slot, the thread's own), and what each writes
funcs="snapshot_acquire snapshot_ref snapshot_unref snap_slot_take snap_slot_give sql_ref sql_unref pthread_mutex_lock pthread_mutex_unlock"
calls() { # STATEMENTS_A_THREAD OUT: "FUNCTION CALLS" lines in OUT.calls
    "$builddir/libtool" --mode=execute valgrind --tool=callgrind --callgrind-out-file="$2" \
        "$bench" -c "$work/dal.ini" --threads "$threads" --statements "$1" --sql "$sql" \
        >"$2.log" 2>&1 || { echo "threads.sh: callgrind failed: $(tail -5 "$2.log")" >&2; exit 1; }
    # "cfn=(ID) NAME" names ID the first time (fn= lines share the table),
    # "calls=COUNT ..." follows the callee's line
    awk 'function callee(s,   id) {
             match(s, /\([0-9]+\)/); id = substr(s, RSTART, RLENGTH)
             s = substr(s, RSTART + RLENGTH); sub(/^ /, "", s)
             if (s != "") { sub(/@.*$/, "", s); sub(/^_+/, "", s); name[id] = s }
             return name[id] }
         /^c?fn=\(/ { f = callee($0); if ($0 ~ /^cfn=/) cur = f }
         /^calls=/ { split($0, a, /[= ]/); n[cur] += a[2] }
         END { for (k in n) print k, n[k] }' "$2" | sort >"$2.calls"
}
calls "$n" "$work/cg1"
calls $((2 * n)) "$work/cg2"
echo "calls a statement (callgrind, $threads threads, $n and $((2 * n)) statements a thread):"
join -a 2 -e 0 -o 0,1.2,2.2 "$work/cg1.calls" "$work/cg2.calls" |
    awk -v f="$funcs" -v d=$((n * threads)) 'BEGIN {split(f, w, " "); for (i in w) want[w[i]] = 1}
        $1 in want {printf "  %-22s %.2f\n", $1, ($3 - $2) / d}'
