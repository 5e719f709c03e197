#!/usr/bin/env bash
# ab.sh -- before/after: the same `dal load` workload through two builds of
# dal, run alternately on one cluster, so a change to the hot path is
# measured as a ratio of back-to-back runs (these machines are noisy).
#
#   bench/ab.sh [--rounds N] [--ini FILE] OLD_DAL NEW_DAL [LOAD OPTIONS...]
#
# OLD_DAL and NEW_DAL are `dal` programs of two build trees (the plugins
# next to each are used by it).  LOAD OPTIONS go to `dal load` (default:
# point-select --threads 2 --duration 3s --warmup 1s).  Without --ini a
# cluster of 4 nodes with the demo layout (100 tables, 20,000 rows) is
# started under a temporary directory and stopped at the end.
# Prints each pair and the median of new/old throughput; --json prints one
# object instead.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
rounds=7 ini="" json=0
bench_options "--rounds=rounds --ini=ini --json --" "$@"
set -- "${bench_args[@]}"
[ $# -ge 2 ] || bench_usage 2 >&2
old=$1 new=$2
shift 2
[ $# -gt 0 ] || set -- point-select --threads 2 --duration 3s --warmup 1s
load=("$@")
for b in "$old" "$new"; do
    [ -x "$b" ] || { echo "ab.sh: no dal program at $b" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/dalab.XXXXXX")
cluster=""
trap '[ -z "$cluster" ] || "$src/tests/harness/cluster.sh" stop "$cluster" --clean >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
if [ -z "$ini" ]; then
    export DAL_BENCH_PASSWORD=dalpass
    cluster="$work/c"
    "$src/tests/harness/cluster.sh" start "$cluster" 4 --db 'bench_%d' >/dev/null
    mapfile -t ports <"$cluster/ports"
    ini="$work/bench.ini"
    {
        printf '[dal]\nmax_parallel = 4\n\n'
        for i in 0 1 2 3; do
            printf '[datasource dbProductSku%d]\nmaster = mysql://dal:${DAL_BENCH_PASSWORD}@127.0.0.1:%s/bench_%d\n\n' \
                "$i" "${ports[$i]}" "$i"
        done
        printf '[table wm_food]\ndatasource = dbProductSku\ndb_shard_num = 4\ntable_shard_num = 100\n'
        printf 'shard_key = wm_poi_id\nstrategy = mod\n'
    } >"$ini"
    DAL_PLUGIN_DIR=$(dirname "$(dirname "$new")")/plugins/.libs "$new" -c "$ini" load -- --prepare --rows 20000 >/dev/null
fi

# run BIN: events per second of one run of the load
run() {
    DAL_PLUGIN_DIR=$(dirname "$(dirname "$1")")/plugins/.libs "$1" -c "$ini" load --json -- "${load[@]}" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["events_per_sec"])'
}

: >"$work/pairs"
for ((i = 1; i <= rounds; i++)); do
    # alternating order: a workload that grows the tables (insert) must
    # not always run the same build second
    { read -r a; read -r b; } < <(bench_pair "$i" run "$old" "$new")
    echo "$a $b" >>"$work/pairs"
    [ "$json" = 1 ] || python3 -c 'import sys; i, a, b = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]); print("pair %d  old %9.1f/s  new %9.1f/s  new/old %.3f" % (i, a, b, b / a))' "$i" "$a" "$b"
done
python3 - "$work/pairs" "$json" "$*" <<'PY'
import json, sys
pairs = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
from math import comb
ratios = sorted(b / a for a, b in pairs)
n = len(ratios)
med = ratios[n // 2] if n % 2 else (ratios[n // 2 - 1] + ratios[n // 2]) / 2
# the sign test's interval for the median, as `dal load --compare` gives it
# (docs/load.md): the narrowest [x(k), x(n+1-k)] with >= 95 % coverage
cover = lambda k: 1 - 2 * sum(comb(n, i) for i in range(k)) / 2 ** n
k = 1
while k + 1 <= n // 2 and cover(k + 1) >= 0.95:
    k += 1
lo, hi, conf = ratios[k - 1], ratios[n - k], cover(k)
if sys.argv[2] == "1":
    print(json.dumps({"load": sys.argv[3], "pairs": [{"old": a, "new": b} for a, b in pairs],
                      "median_ratio": med, "median_ratio_low": lo, "median_ratio_high": hi,
                      "median_ratio_confidence": conf}))
else:
    print("median new/old %.3f over %d pairs (%.0f%% interval %.3f-%.3f)" % (med, n, 100 * conf, lo, hi))
PY
