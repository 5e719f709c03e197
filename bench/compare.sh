#!/usr/bin/env bash
# compare.sh -- the end-to-end benchmarks of dal: `dal load --compare`
# (dal against plain libmysqlclient, alternating rounds) on throwaway MariaDB
# clusters that this script starts under a temporary directory.
#
#   bench/compare.sh [--rounds N] [--duration T] [--warmup T] [--rows N]
#                    [--threads "1 2"] [--plot-threads "1 2 4 8"]
#                    [--nodes "2 4 8 16"] [--only "GROUP ..."] [--out DIR] [--quick]
#
# Measures, each with --rounds alternating dal/direct pairs:
#   - point-select (by text, and through dal_prepare handles), insert and
#     read-write at each of --threads, on 4 nodes
#     with the demo layout (wm_food, 100 tables, mod); insert uses Leaf ids
#     when idgen_leaf.so is in the plugin directory, AUTO_INCREMENT if not;
#   - point-select with the prometheus and slowlog monitors on, when their
#     plugins are there;
#   - point-select at each of --plot-threads, for bench/plot.sh;
#   - scatter (one physical table per node, max_parallel = nodes) on a new
#     cluster of each size in --nodes.
# --only runs some of these groups: point-select, prepared, threads (the
# --plot-threads runs), monitors, insert, read-write, scatter.  Judging a
# target a few per cent below parity takes many pairs, e.g.
#   bench/compare.sh --only "point-select monitors" --threads 2 --rounds 41 \
#       --duration 2s --warmup 500ms
# (the interval is then about +-0.8 % wide; with 9 pairs it is 4-10 %).
# Writes DIR/results.jsonl (one `dal load --json` object per measurement,
# with "label" and "nodes" added) and DIR/summary.md, and prints the summary.
# DIR defaults to a new directory under ${TMPDIR:-/tmp}.
#
# Uses $DAL_BIN (default: _build/tools/dal) and $DAL_PLUGIN_DIR (default:
# the plugins next to it).  Needs python3 and the MariaDB server.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
bench_dal
rounds=9 duration=5s warmup=1s rows=100000 out="" only=""
threads="1 2" plot_threads="1 2 4 8" nodes="2 4 8 16"

while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=$2; shift ;;
    --duration) duration=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --rows) rows=$2; shift ;;
    --threads) threads=$2; shift ;;
    --plot-threads) plot_threads=$2; shift ;;
    --nodes) nodes=$2; shift ;;
    --only) only=$2; shift ;;
    --out) out=$2; shift ;;
    --quick) rounds=3 duration=2s warmup=500ms rows=20000 threads="1 2" plot_threads="1 2" nodes="2 4" ;;
    -h | --help) bench_usage 0 ;;
    *) echo "compare.sh: unknown option '$1'" >&2; bench_usage 2 >&2 ;;
    esac
    shift
done
groups="point-select prepared threads monitors insert read-write scatter"
for g in $only; do
    case " $groups " in
    *" $g "*) ;;
    *) echo "compare.sh: unknown group '$g' for --only (one of: $groups)" >&2; exit 2 ;;
    esac
done
# wanted GROUP...: true without --only, or when --only names one of them
wanted() {
    local g
    [ -n "$only" ] || return 0
    for g in "$@"; do
        case " $only " in *" $g "*) return 0 ;; esac
    done
    return 1
}
[ -x "$DAL_BIN" ] || { echo "compare.sh: no dal program at $DAL_BIN (build first, or set DAL_BIN)" >&2; exit 1; }
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/dalbench.XXXXXX")
mkdir -p "$out"
: >"$out/results.jsonl"

work=$(mktemp -d "${TMPDIR:-/tmp}/dalbenchc.XXXXXX")
cluster=""
stop_cluster() {
    [ -z "$cluster" ] || "$src/tests/harness/cluster.sh" stop "$cluster" --clean >/dev/null 2>&1 || true
    cluster=""
}
trap 'stop_cluster; rm -rf "$work"' EXIT
export DAL_BENCH_PASSWORD=dalpass

# start_cluster N: a new cluster of N nodes, databases bench_0 .. bench_N-1
start_cluster() {
    stop_cluster
    cluster="$work/c$1"
    "$src/tests/harness/cluster.sh" start "$cluster" "$1" --db 'bench_%d' >/dev/null
    mapfile -t ports <"$cluster/ports"
}

# write_ini FILE NODES TABLES [EXTRA-INI-TEXT]: the layout of the demo
write_ini() {
    local file=$1 n=$2 tables=$3 i
    {
        printf '[dal]\nmax_parallel = %d\n\n' "$n"
        for ((i = 0; i < n; i++)); do
            printf '[datasource dbProductSku%d]\nmaster = mysql://dal:${DAL_BENCH_PASSWORD}@127.0.0.1:%s/bench_%d\n\n' \
                "$i" "${ports[$i]}" "$i"
        done
        printf '[table wm_food]\ndatasource = dbProductSku\ndb_shard_num = %d\ntable_shard_num = %d\n' "$n" "$tables"
        printf 'shard_key = wm_poi_id\nstrategy = mod\n'
        printf '%s' "${4:-}"
    } >"$file"
}

# measure LABEL NODES INI WORKLOAD [LOAD OPTIONS]: one --compare, appended
# to results.jsonl.  A failed comparison is reported and the others still
# run; the script then exits 1.
failed=0
measure() {
    local label=$1 n=$2 ini=$3 json
    shift 3
    printf '%-34s ' "$label" >&2
    if ! json=$("$DAL_BIN" -c "$ini" load --json -- --compare --rounds "$rounds" --duration "$duration" \
        --warmup "$warmup" --rows "$rows" "$@"); then
        echo "FAILED: $label ($*)" >&2
        failed=$((failed + 1))
        return 0
    fi
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["label"]=sys.argv[2]; d["nodes"]=int(sys.argv[3]); print(json.dumps(d))' \
        "$json" "$label" "$n" >>"$out/results.jsonl"
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("median ratio %.3f" % d["median_ratio"])' "$json" >&2
}


echo "results in $out" >&2
if wanted point-select prepared threads monitors insert read-write; then
    echo "4 nodes, 100 tables, $rows rows ..." >&2
    start_cluster 4
    ini="$work/bench.ini"
    write_ini "$ini" 4 100
    "$DAL_BIN" -c "$ini" load -- --prepare --rows "$rows" >&2
fi

if wanted point-select; then
    for t in $threads; do
        measure "point-select" 4 "$ini" point-select --threads "$t"
    done
fi
if wanted prepared; then
    for t in $threads; do
        measure "point-select, prepared" 4 "$ini" point-select --threads "$t" --prepared
    done
fi
if wanted threads; then
    for t in $plot_threads; do
        case " $threads " in *" $t "*) continue ;; esac
        measure "point-select" 4 "$ini" point-select --threads "$t"
    done
fi

# measure_monitors: point-select with the prometheus and slowlog monitors on
measure_monitors() {
    local mini="$work/monitors.ini" t
    if [ ! -f "$DAL_PLUGIN_DIR/monitor_prometheus.so" ] || [ ! -f "$DAL_PLUGIN_DIR/monitor_slowlog.so" ]; then
        echo "(no monitor_prometheus.so and monitor_slowlog.so in $DAL_PLUGIN_DIR: monitors not measured)" >&2
        return 0
    fi
    write_ini "$mini" 4 100 "$(printf '\n[monitor prometheus]\naddress = 127.0.0.1:%s\n\n[monitor slow]\nplugin = slowlog\npath = %s\nthreshold = 200ms\n' \
        "$("$src/tests/harness/cluster.sh" free-port)" "$work/slow.log")"
    for t in $threads; do
        measure "point-select, monitors on" 4 "$mini" point-select --threads "$t"
    done
}

# measure_insert: Leaf IDs through dal against AUTO_INCREMENT direct, or
# AUTO_INCREMENT on both sides without the leaf plugin
measure_insert() {
    local label="insert (AUTO_INCREMENT both)" iini=$ini t
    if [ -f "$DAL_PLUGIN_DIR/idgen_leaf.so" ]; then
        iini="$work/leaf.ini"
        write_ini "$iini" 4 100 "$(printf 'id_column = id\nidgen = food_ids\n\n[idgen food_ids]\nplugin = leaf\ndatasource = dbProductSku0\nstep = 1000\n')"
        "$DAL_BIN" -c "$iini" idgen init >/dev/null
        label="insert (Leaf ids vs AUTO_INCREMENT)"
    else
        echo "(no idgen_leaf.so in $DAL_PLUGIN_DIR: insert compared with AUTO_INCREMENT on both sides)" >&2
    fi
    for t in $threads; do
        measure "$label" 4 "$iini" insert --threads "$t"
    done
}

if wanted monitors; then
    measure_monitors
fi
if wanted insert; then
    measure_insert
fi
if wanted read-write; then
    for t in $threads; do
        measure "read-write (transactions)" 4 "$ini" read-write --threads "$t"
    done
fi

wanted scatter || nodes=""
for n in $nodes; do
    echo "$n nodes, one table each ..." >&2
    start_cluster "$n"
    sini="$work/scatter$n.ini"
    write_ini "$sini" "$n" "$n"
    "$DAL_BIN" -c "$sini" load -- --prepare --rows 10000 --tables "$n" --dbs "$n" >/dev/null
    rows=10000 measure "scatter, $n nodes" "$n" "$sini" scatter --tables "$n" --dbs "$n"
done
stop_cluster

python3 - "$out/results.jsonl" >"$out/summary.md" <<'PY'
import json, sys

runs = [json.loads(line) for line in open(sys.argv[1])]
def med(xs):
    xs = sorted(x for x in xs if x is not None)
    n = len(xs)
    return float("nan") if n == 0 else xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
def side(rs, mode, key):
    return med([r[mode][key] for r in rs])
def lat(rs, mode, q):
    return med([r[mode]["latency_us"][q] for r in rs])

print("| benchmark | nodes | threads | dal/s | direct/s | ratio (median) | interval (confidence) | p50 ratio | p50 dal / direct (us) | client CPU dal / direct (us) |")
print("|---|---|---|---|---|---|---|---|---|---|")
for d in runs:
    rs = d["rounds"]
    print("| %s | %d | %d | %.0f | %.0f | **%.3f** | %.3f-%.3f (%.0f %%) | %.3f | %.1f / %.1f | %.1f / %.1f |" % (
        d["label"], d["nodes"], d["threads"], side(rs, "dal", "events_per_sec"),
        side(rs, "direct", "events_per_sec"), d["median_ratio"], d["median_ratio_low"],
        d["median_ratio_high"], 100 * d["median_ratio_confidence"],
        d["median_p50_ratio"], lat(rs, "dal", "p50"), lat(rs, "direct", "p50"),
        d["median_client_cpu_us_dal"], d["median_client_cpu_us_direct"]))
scatter = [d for d in runs if d["workload"] == "scatter"]
if scatter:
    print()
    print("Scatter latency (one statement over every node, medians over the rounds, us):")
    print()
    print("| nodes | dal p50 | dal p99 | direct p50 | direct p99 |")
    print("|---|---|---|---|---|")
    for d in scatter:
        rs = d["rounds"]
        print("| %d | %.0f | %.0f | %.0f | %.0f |" % (d["nodes"], lat(rs, "dal", "p50"),
              lat(rs, "dal", "p99"), lat(rs, "direct", "p50"), lat(rs, "direct", "p99")))
PY
python3 - "$out/results.jsonl" >"$out/threads.dat" <<'PY'
import json, sys

def med(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
print("# threads dal_per_sec direct_per_sec (medians over the rounds, point-select, 4 nodes)")
rows = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["label"] == "point-select":
        rows[d["threads"]] = (med([r["dal"]["events_per_sec"] for r in d["rounds"]]),
                              med([r["direct"]["events_per_sec"] for r in d["rounds"]]))
for t in sorted(rows):
    print(t, "%.1f %.1f" % rows[t])
PY
cat "$out/summary.md"
echo "plot: bench/plot.sh $out/threads.dat" >&2
[ "$failed" -eq 0 ] || { echo "compare.sh: $failed comparison(s) failed (see above)" >&2; exit 1; }
