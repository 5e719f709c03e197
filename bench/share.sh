#!/usr/bin/env bash
# share.sh -- where the machine's time goes during a `dal load` workload,
# dal against the direct side, in microseconds of CPU per statement:
# the client split by library (libdal, the connector, libc, the kernel on
# the client's behalf, the rest), the servers (their own code and
# libraries, and the kernel on their behalf), and idle time.  Both sides
# run on the same cores as the servers, so what dal adds anywhere shows
# up as a lower throughput; this says where.
#
#   bench/share.sh CONFIG [--rounds 6] [--duration 5s] [--warmup 300ms]
#                  [--threads 2] [--workload point-select] [--direct-text]
#                  [--touch-lines N] [--busy-ns N]
#
# CONFIG is a dal configuration whose table `dal load --prepare` has
# filled.  Each round runs dal, then the direct side (server-side
# prepared; --direct-text: by text; --touch-lines N, --busy-ns N: touching
# N cache lines of its own, or busy for N ns, per statement besides, see
# `dal load`), each under `perf record -a -e
# cpu-clock` (every CPU sampled, idle included), and turns each part's
# share of the samples into microseconds a statement (share x CPUs /
# statements per second).  The servers' user + system time from /proc,
# per statement of the run, is printed last as a check on the sampling.
# Printed: per part, the median over the rounds
# for dal, for direct, and of their difference within a round; then the
# median throughput ratio.  The shares cover the whole recording (start-up
# and warm-up too), so keep --duration well above them.
#
# Uses $DAL_BIN (default: _build/tools/dal) and the plugins next to it;
# needs perf (package linux-perf), system-wide sampling (root, or
# kernel.perf_event_paranoid <= 0), and python3.  No hardware counters
# are needed: cpu-clock is a software event, available on the virtual
# machines these figures come from.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
bench_dal
[ $# -ge 1 ] || bench_usage 2
config=$1
shift
rounds=6 duration=5s warmup=300ms threads=2 workload=point-select
direct=(--direct --server-prepared) touch=()
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=$2; shift ;;
    --duration) duration=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --threads) threads=$2; shift ;;
    --workload) workload=$2; shift ;;
    --direct-text) direct=(--direct) ;;
    --touch-lines) touch+=(--touch-lines "$2"); shift ;;
    --busy-ns) touch+=(--busy-ns "$2"); shift ;;
    -h|--help) bench_usage 0 ;;
    *) echo "share.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
command -v perf >/dev/null || { echo "share.sh: perf not found (apt-get install linux-perf)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/dalshare.XXXXXX")
trap 'rm -rf "$work"' EXIT
comm=$(basename "$DAL_BIN" | cut -c1-15)   # the client's threads carry its name
tick=$(getconf CLK_TCK)
# server_ticks: user + system ticks of every MariaDB server on the machine
# shellcheck disable=SC2046 # one word a process id
server_ticks() { proc_ticks $(pgrep -x mariadbd; pgrep -x mysqld); }

for ((r = 1; r <= rounds; r++)); do
    for way in dal direct; do
        args=()
        [ "$way" = direct ] && args=("${direct[@]}" "${touch[@]}")
        t0=$(server_ticks)
        perf record -q -a -e cpu-clock -F 1999 -o "$work/perf.data" -- \
            "$DAL_BIN" -c "$config" --json load "$workload" --threads "$threads" \
            --duration "$duration" --warmup "$warmup" "${args[@]}" >"$work/load.json" 2>/dev/null
        t1=$(server_ticks)
        perf report -i "$work/perf.data" --sort comm,dso -q --percent-limit 0 \
            -F overhead,comm,dso 2>/dev/null >"$work/report.txt"
        python3 - "$way" "$r" "$comm" "$(nproc)" "$work" "$((t1 - t0))" "$tick" >>"$work/rows.jsonl" <<'PY'
import json, sys
way, rnd, comm, ncpu, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
ticks, hz = int(sys.argv[6]), int(sys.argv[7])
load = json.load(open(work + "/load.json"))
rate = load["statements_per_sec"]
# the servers' own accounting, as a check on the samples: /proc's ticks
# over the whole run, start-up included, per statement of the run
parts = {"servers, /proc": ticks / hz * 1e6 / load["statements"]}
for line in open(work + "/report.txt"):
    f = line.split()
    if len(f) < 3 or not f[0].endswith("%"):
        continue
    pct, who, dso = float(f[0][:-1]), f[1], " ".join(f[2:])
    if who == comm:
        part = ("client libdal" if "libdal" in dso else
                "client connector" if "libmariadb" in dso or "libmysqlclient" in dso else
                "client libc" if "libc.so" in dso else
                "client kernel" if "kernel" in dso else "client other")
    elif who.startswith(("mariadbd", "mysqld")):
        part = "servers kernel" if "kernel" in dso else "servers"
    elif who == "swapper":
        part = "idle"
    else:
        part = "other processes"
    parts[part] = parts.get(part, 0.0) + pct / 100 * ncpu * 1e6 / rate
print(json.dumps({"way": way, "round": rnd, "rate": rate, "parts": parts}))
PY
    done
done

python3 - "$work/rows.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = lambda v: sorted(v)[len(v) // 2] if len(v) % 2 else sum(sorted(v)[len(v) // 2 - 1:len(v) // 2 + 1]) / 2
order = ["client libdal", "client connector", "client libc", "client kernel", "client other",
         "servers", "servers kernel", "idle", "other processes"]
by = {(r["way"], r["round"]): r for r in rows}
rounds = sorted({r["round"] for r in rows})
print("µs of machine CPU per statement (median of %d rounds)" % len(rounds))
print("%-18s %8s %8s %12s" % ("part", "dal", "direct", "dal-direct"))
total = {"dal": [], "direct": [], "diff": []}
for p in order + ["all", "servers, /proc"]:
    get = ((lambda r: sum(v for k, v in r["parts"].items() if k in order)) if p == "all"
           else (lambda r: r["parts"].get(p, 0.0)))
    d = [get(by[("dal", k)]) for k in rounds]
    x = [get(by[("direct", k)]) for k in rounds]
    print("%-18s %8.2f %8.2f %+12.2f" % (p, med(d), med(x), med([a - b for a, b in zip(d, x)])))
ratio = [by[("dal", k)]["rate"] / by[("direct", k)]["rate"] for k in rounds]
print("throughput dal/direct: median %.3f (%.3f-%.3f)" % (med(ratio), min(ratio), max(ratio)))
PY
