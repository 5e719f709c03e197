#!/usr/bin/env bash
# haproxy.sh -- dal-proxy against the floor of any proxy hop: haproxy in
# TCP mode, which parses nothing and relays bytes, and dal-proxy
# (pass-through, one datasource) in front of the same MariaDB server and
# schema.  Rounds alternate the two (which goes first alternates too), in
# both protocols (sysbench --db-ps-mode auto: prepared statements;
# disable: text), and each run is framed by the CPU time
# (/proc/PID/stat utime + stime) of the proxy in use and of mariadbd.
# Prints per protocol the median qps ratio dal-proxy/haproxy and the
# median CPU per query (µs) of each process in each configuration.
#
#   bench/haproxy.sh [--rounds N] [--time S] [--threads T] [--test NAME]
#                    [--ps-mode auto|disable|both] [--inline-io true|false]
#                    [--proxy-threads N] [--json]
#
# Defaults: 5 rounds of 3 s a protocol, 4 client threads,
# oltp_point_select, both protocols, 10,000 rows.  Starts its own server,
# haproxy (its configuration in the temporary directory, in the
# foreground as a child) and dal-proxy under a temporary directory.
# CPU times are in clock ticks (10 ms): a run of a few seconds at some
# 10,000 queries a second reads them to about 1 %.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
rounds=5 secs=3 threads=4 modes="auto disable" test=oltp_point_select json=0 inline_io='' io_threads=''
bench_options "--rounds=rounds --time=secs --threads=threads --test=test --inline-io=inline_io
    --proxy-threads=io_threads --ps-mode=modes --json" "$@"
[ "$modes" != both ] || modes="auto disable"
bench_need haproxy haproxy
bench_harness

px_cluster 1 --db sbtest
server_pid=$(cat "$work/c/m0/pid")
proxy_lines=()
[ -z "$inline_io" ] || proxy_lines+=("inline_io = $inline_io")
[ -z "$io_threads" ] || proxy_lines+=("threads = $io_threads")
bench_passthrough dal "${proxy_lines[@]}"
bench_haproxy ha "${ports[0]}"
bench_sb_prepare "${ports[0]}" sbtest
# sysbench's options through each proxy: haproxy passes the server's user on
mapfile -t via_ha < <(bench_target "${bench_port[ha]}" sbtest)
mapfile -t via_dal < <(bench_target "${bench_port[dal]}")
hz=$(getconf CLK_TCK)

# switches PID: context switches (voluntary + not) of all the process's threads
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {n += $2} END {print n + 0}'; }

# run NAME -> "QPS PROXY_US SERVER_US PROXY_CS SERVER_CS": a run in ps-mode
# $ps through the proxy NAME (ha or dal, its options via_NAME); the
# proxy's and the server's CPU per query over the run, and their context
# switches per query
run() {
    local ppid=${bench_pid[$1]} p0 s0 p1 s1 qps q c0 d0 c1 d1 via
    case $1 in ha) via=("${via_ha[@]}") ;; dal) via=("${via_dal[@]}") ;; esac
    c0=$(switches "$ppid") d0=$(switches "$server_pid")
    p0=$(proc_ticks "$ppid") s0=$(proc_ticks "$server_pid")
    read -r qps _ q < <(sb_run "$test" "$ps" "${via[@]}")
    p1=$(proc_ticks "$ppid") s1=$(proc_ticks "$server_pid")
    c1=$(switches "$ppid") d1=$(switches "$server_pid")
    if [ -z "$q" ] || [ "$q" -le 0 ]; then echo "haproxy.sh: sysbench ran no queries" >&2; exit 1; fi
    awk -v r="$qps" -v q="$q" -v p=$((p1 - p0)) -v s=$((s1 - s0)) -v hz="$hz" \
        -v pc=$((c1 - c0)) -v sc=$((d1 - d0)) \
        'BEGIN {printf "%s %.1f %.1f %.2f %.2f\n", r, p * 1e6 / hz / q, s * 1e6 / hz / q, pc / q, sc / q}'
}

json_parts=()
for ps in $modes; do
    # one run each to open the connections and fill the caches
    run ha >/dev/null
    run dal >/dev/null
    ratios=() ha_cpu=() ha_srv=() dal_cpu=() dal_srv=() ha_cs=() ha_scs=() dal_cs=() dal_scs=()
    for r in $(seq "$rounds"); do
        { read -r hq hc hs hx hy; read -r dq dc ds dx dy; } < <(bench_pair "$r" run ha dal)
        ratio=$(ratio "$hq" "$dq")
        ratios+=("$ratio") ha_cpu+=("$hc") ha_srv+=("$hs") dal_cpu+=("$dc") dal_srv+=("$ds")
        ha_cs+=("$hx") ha_scs+=("$hy") dal_cs+=("$dx") dal_scs+=("$dy")
        [ "$json" = 1 ] || printf 'ps-mode %-7s round %d: haproxy %s/s (haproxy %s us %s cs, mariadbd %s us %s cs a query)  dal-proxy %s/s (dal-proxy %s us %s cs, mariadbd %s us %s cs)  ratio %s\n' \
            "$ps" "$r" "$hq" "$hc" "$hx" "$hs" "$hy" "$dq" "$dc" "$dx" "$ds" "$dy" "$ratio"
    done
    m_ratio=$(median "${ratios[@]}")
    m_hc=$(median "${ha_cpu[@]}") m_hs=$(median "${ha_srv[@]}")
    m_dc=$(median "${dal_cpu[@]}") m_ds=$(median "${dal_srv[@]}")
    m_hx=$(median "${ha_cs[@]}") m_hy=$(median "${ha_scs[@]}")
    m_dx=$(median "${dal_cs[@]}") m_dy=$(median "${dal_scs[@]}")
    if [ "$json" = 1 ]; then
        json_parts+=("$(printf '"%s":{"ratios":[%s],"median_ratio":%s,"cpu_us_per_query":{"haproxy":{"haproxy":%s,"mariadbd":%s},"dal_proxy":{"dal_proxy":%s,"mariadbd":%s}},"switches_per_query":{"haproxy":{"haproxy":%s,"mariadbd":%s},"dal_proxy":{"dal_proxy":%s,"mariadbd":%s}}}' \
            "$ps" "$(IFS=,; echo "${ratios[*]}")" "$m_ratio" "$m_hc" "$m_hs" "$m_dc" "$m_ds" "$m_hx" "$m_hy" "$m_dx" "$m_dy")")
    else
        printf 'ps-mode %s: median dal-proxy/haproxy %s; CPU a query: haproxy %s us + mariadbd %s us behind it, dal-proxy %s us + mariadbd %s us behind it; context switches a query: haproxy %s + mariadbd %s, dal-proxy %s + mariadbd %s\n' \
            "$ps" "$m_ratio" "$m_hc" "$m_hs" "$m_dc" "$m_ds" "$m_hx" "$m_hy" "$m_dx" "$m_dy"
    fi
done
if [ "$json" = 1 ]; then
    printf '{"test":"%s","threads":%d,"rounds":%d,"seconds":%d,%s}\n' \
        "$test" "$threads" "$rounds" "$secs" "$(IFS=,; echo "${json_parts[*]}")"
fi
