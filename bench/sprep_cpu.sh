#!/usr/bin/env bash
# sprep_cpu.sh -- CPU per statement, client and servers, of the four ways
# to run a workload: dal with server_prepare = auto, dal with it off,
# plain libmysqlclient by text, plain libmysqlclient with server-side
# prepared statements.  On a machine whose cores are shared with other
# work, throughput moves by tens of per cent from run to run, while the
# CPU time each process spends per statement does not: where client and
# servers share the cores, throughput follows the sum.
#
#   bench/sprep_cpu.sh CONFIG CONFIG_OFF PIDS [--workload point-select]
#                      [--statements 20000] [--threads 2] [--rounds 5] [--handles]
#
# CONFIG and CONFIG_OFF as for bench/sprep.sh; PIDS the process ids of the
# MariaDB servers (quoted, space-separated), whose user+system time is read
# from /proc before and after each run.  The four ways alternate, --rounds
# times; printed: per way, the median over the rounds of client and
# server CPU microseconds per statement, and their sum; then the median
# (and range) over the rounds of each dal way's sum against the two direct
# ways' sums of the same round, as a throughput ratio (their quotient).
# --handles adds a fifth way: dal with server_prepare = auto running each
# statement through a dal_prepare handle (`dal load --prepared`).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
bench_dal
[ $# -ge 3 ] || bench_usage 2
config=$1 config_off=$2 server_pids=$3
shift 3
workload=point-select statements=20000 threads=2 rounds=5 handles=0
bench_options "--workload=workload --statements=statements --threads=threads --rounds=rounds
    --handles" "$@"
ways="dal-auto dal-off direct-text direct-prepared"
[ "$handles" = 0 ] || ways="dal-auto dal-handles dal-off direct-text direct-prepared"
tick=$(getconf CLK_TCK)
# server_ticks: user + system ticks of every server
# shellcheck disable=SC2086 # PIDS is a list
server_ticks() { proc_ticks $server_pids; }
out=$(mktemp "${TMPDIR:-/tmp}/sprep_cpu.XXXXXX")
trap 'rm -f "$out"' EXIT
for ((r = 1; r <= rounds; r++)); do
    for way in $ways; do
        cfg=$config args=()
        case $way in
        dal-handles) args=(--prepared) ;;
        dal-off) cfg=$config_off ;;
        direct-text) args=(--direct) ;;
        direct-prepared) args=(--direct --server-prepared) ;;
        esac
        before=$(server_ticks)
        json=$("$DAL_BIN" -c "$cfg" --json load "$workload" "${args[@]}" --statements "$statements" \
            --threads "$threads" --warmup 200ms)
        after=$(server_ticks)
        python3 -c 'import json, sys
d = json.loads(sys.argv[1])
n = d["statements"]
print(json.dumps({"round": int(sys.argv[6]), "way": sys.argv[2], "client": d["client_cpu_us_per_event"] * d["events"] / n,
                  "server": (int(sys.argv[4]) - int(sys.argv[3])) * 1e6 / int(sys.argv[5]) / n,
                  "per_s": d["statements_per_sec"]}))' "$json" "$way" "$before" "$after" "$tick" "$r" >>"$out"
    done
    echo "round $r of $rounds done" >&2
done
python3 - "$out" <<'EOF'
import json, statistics, sys
ways = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    ways.setdefault(d["way"], []).append(d)
print("| way | client CPU us/statement | servers' CPU us/statement | sum | statements/s (median, range) |")
print("|---|---:|---:|---:|---:|")
for w, ds in ways.items():
    med = lambda k: statistics.median(x[k] for x in ds)
    tot = statistics.median(x["client"] + x["server"] for x in ds)
    rates = sorted(x["per_s"] for x in ds)
    print("| %s | %.2f | %.2f | %.2f | %.0f (%.0f-%.0f) |" % (w, med("client"), med("server"), tot,
          med("per_s"), rates[0], rates[-1]))
sums = {}
for w, ds in ways.items():
    for x in ds:
        sums.setdefault(x["round"], {})[w] = x["client"] + x["server"]
print()
print("| way | against direct-text | against direct-prepared |")
print("|---|---:|---:|")
for w in ways:
    if not w.startswith("dal"):
        continue
    cells = []
    for base in ("direct-text", "direct-prepared"):
        q = sorted(r[base] / r[w] for r in sums.values() if base in r and w in r)
        cells.append("%.3f (%.3f-%.3f)" % (statistics.median(q), q[0], q[-1]) if q else "-")
    print("| %s | %s | %s |" % (w, cells[0], cells[1]))
EOF
