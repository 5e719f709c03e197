#!/usr/bin/env bash
# sprep.sh -- server-side prepared statements ([dal] server_prepare) judged
# end to end: `dal load --compare` against plain libmysqlclient sending
# text, and against plain libmysqlclient with server-side prepared
# statements (--server-prepared), the two comparisons alternating in one
# run so that both see the same machine.
#
#   bench/sprep.sh CONFIG [--workloads "point-select insert read-write"]
#                  [--threads 2] [--cycles 6] [--pairs 3] [--duration 2s]
#                  [--warmup 500ms] [--off CONFIG_OFF]
#
# CONFIG is a configuration with the demo layout (wm_food, 4 dbs x 100
# tables, mod) whose table was made with `dal load --prepare`; dal's side
# runs as CONFIG says (server_prepare = auto unless it sets off).  Each
# cycle runs, per workload, --pairs alternating dal/direct pairs against
# direct text, then --pairs against direct prepared.  Prints, per workload
# and comparison, the median of the per-pair ratios dal / direct with the
# lowest and highest pair, and the median client CPU per statement.
# --off CONFIG_OFF (the same file with server_prepare = off) adds a third
# comparison to each cycle: dal sending text against direct text.
# Uses $DAL_BIN (default: _build/tools/dal) and $DAL_PLUGIN_DIR.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
bench_dal
[ $# -ge 1 ] || bench_usage 2
config=$1
shift
workloads="point-select insert read-write" threads=2 cycles=6 pairs=3 duration=2s warmup=500ms
config_off=""
bench_options "--workloads=workloads --threads=threads --cycles=cycles --pairs=pairs
    --duration=duration --warmup=warmup --off=config_off" "$@"
out=$(mktemp "${TMPDIR:-/tmp}/sprep.XXXXXX")
trap 'rm -f "$out"' EXIT
for ((c = 1; c <= cycles; c++)); do
    for w in $workloads; do
        for side in text prepared ${config_off:+off}; do
            extra=() cfg=$config
            [ "$side" = prepared ] && extra=(--server-prepared)
            [ "$side" = off ] && cfg=$config_off
            "$DAL_BIN" -c "$cfg" --json load "$w" --compare --rounds "$pairs" \
                --threads "$threads" --duration "$duration" --warmup "$warmup" "${extra[@]}" |
                python3 -c 'import json, sys; d = json.load(sys.stdin); print(json.dumps(
                    {"w": sys.argv[1], "side": sys.argv[2], "rounds": d["rounds"]}))' "$w" "$side" \
                >>"$out"
        done
    done
    echo "cycle $c of $cycles done" >&2
done
python3 - "$out" <<'EOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    rows.setdefault((d["w"], d["side"]), []).extend(d["rounds"])
names = {"text": "dal (auto) / direct text", "prepared": "dal (auto) / direct server-prepared",
         "off": "dal (off) / direct text"}
print("| workload | comparison | pairs | median (lowest-highest) | client CPU us/statement, dal / direct |")
print("|---|---|---:|---:|---:|")
for (w, side), rs in rows.items():
    ratios = sorted(r["ratio"] for r in rs)
    cpu_d = statistics.median(r["dal"]["client_cpu_us_per_event"] for r in rs)
    cpu_x = statistics.median(r["direct"]["client_cpu_us_per_event"] for r in rs)
    print("| %s | %s | %d | %.3f (%.3f-%.3f) | %.2f / %.2f |" % (
        w, names[side], len(ratios),
        statistics.median(ratios), ratios[0], ratios[-1], cpu_d, cpu_x))
EOF
