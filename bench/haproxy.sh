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
rounds=5 secs=3 threads=4 modes="auto disable" test=oltp_point_select json=0 inline_io= io_threads=

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit "$1"; }
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=$2; shift ;;
    --time) secs=$2; shift ;;
    --threads) threads=$2; shift ;;
    --test) test=$2; shift ;;
    --inline-io) inline_io=$2; shift ;;
    --proxy-threads) io_threads=$2; shift ;;
    --ps-mode) modes=$2; [ "$modes" != both ] || modes="auto disable"; shift ;;
    --json) json=1 ;;
    -h | --help) usage 0 ;;
    *) echo "haproxy.sh: unknown option '$1'" >&2; usage 2 >&2 ;;
    esac
    shift
done
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
bench_need haproxy.sh sysbench sysbench
bench_need haproxy.sh haproxy haproxy
export DAL_BUILDDIR=${DAL_BUILDDIR:-$src/_build}
# shellcheck source=tests/harness/proxy_lib.sh
. "$src/tests/harness/proxy_lib.sh"

px_cluster 1 --db sbtest
server_pid=$(cat "$work/c/m0/pid")

dport=$("$harness/cluster.sh" free-port)
bench_passthrough_ini "$work/pass.ini" "$dport" "${ports[0]}" sbtest
[ -z "$inline_io" ] || sed -i "s/^\[proxy\]\$/[proxy]\ninline_io = $inline_io/" "$work/pass.ini"
[ -z "$io_threads" ] || sed -i "s/^\[proxy\]\$/[proxy]\nthreads = $io_threads/" "$work/pass.ini"
px_start "$work/pass.ini" "$dport"
dal_pid=${pids[-1]}

hport=$("$harness/cluster.sh" free-port)
cat >"$work/haproxy.cfg" <<EOF
global
    maxconn 4096
defaults
    mode tcp
    timeout connect 5s
    timeout client 10m
    timeout server 10m
listen mysql
    bind 127.0.0.1:$hport
    server s0 127.0.0.1:${ports[0]}
EOF
haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
ha_pid=$!
pids+=("$ha_pid")
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$hport") 2>/dev/null && break
    kill -0 "$ha_pid" 2>/dev/null || { echo "haproxy.sh: haproxy exited: $(tail -5 "$work/haproxy.log")" >&2; exit 1; }
    sleep 0.1
done

common=(--tables=1 --table-size=10000 --auto_inc=off --create_secondary=off --skip_trx=on)
direct=(--mysql-host=127.0.0.1 --mysql-port="${ports[0]}" --mysql-user=dal --mysql-password=dalpass --mysql-db=sbtest)
via_ha=(--mysql-host=127.0.0.1 --mysql-port="$hport" --mysql-user=dal --mysql-password=dalpass --mysql-db=sbtest)
via_dal=(--mysql-host=127.0.0.1 --mysql-port="$dport" --mysql-user=sb --mysql-password=sbpass --mysql-db=sbtest)
sysbench oltp_read_only "${common[@]}" "${direct[@]}" prepare >/dev/null
hz=$(getconf CLK_TCK)

# switches PID: context switches (voluntary + not) of all the process's threads
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {n += $2} END {print n + 0}'; }

# run PS PROXY_PID TARGET_OPTIONS... -> "QPS PROXY_US SERVER_US PROXY_CS
# SERVER_CS": the proxy's and the server's CPU per query over the run, and
# their context switches per query
run() {
    local ps=$1 ppid=$2 p0 s0 p1 s1 qps q c0 d0 c1 d1
    shift 2
    c0=$(switches "$ppid") d0=$(switches "$server_pid")
    p0=$(proc_ticks "$ppid") s0=$(proc_ticks "$server_pid")
    read -r qps _ q < <(sysbench "$test" "${common[@]}" "$@" --threads="$threads" --time="$secs" \
        --db-ps-mode="$ps" --percentile=99 run | sb_figures)
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
    run "$ps" "$ha_pid" "${via_ha[@]}" >/dev/null
    run "$ps" "$dal_pid" "${via_dal[@]}" >/dev/null
    ratios=() ha_cpu=() ha_srv=() dal_cpu=() dal_srv=() ha_cs=() ha_scs=() dal_cs=() dal_scs=()
    for r in $(seq "$rounds"); do
        if [ $((r % 2)) = 1 ]; then
            read -r hq hc hs hx hy < <(run "$ps" "$ha_pid" "${via_ha[@]}")
            read -r dq dc ds dx dy < <(run "$ps" "$dal_pid" "${via_dal[@]}")
        else
            read -r dq dc ds dx dy < <(run "$ps" "$dal_pid" "${via_dal[@]}")
            read -r hq hc hs hx hy < <(run "$ps" "$ha_pid" "${via_ha[@]}")
        fi
        ratio=$(awk -v a="$hq" -v b="$dq" 'BEGIN {printf "%.3f", b / a}')
        ratios+=("$ratio") ha_cpu+=("$hc") ha_srv+=("$hs") dal_cpu+=("$dc") dal_srv+=("$ds")
        ha_cs+=("$hx") ha_scs+=("$hy") dal_cs+=("$dx") dal_scs+=("$dy")
        [ "$json" = 1 ] || printf 'ps-mode %-7s round %d: haproxy %s/s (haproxy %s us %s cs, mariadbd %s us %s cs a query)  dal-proxy %s/s (dal-proxy %s us %s cs, mariadbd %s us %s cs)  ratio %s\n' \
            "$ps" "$r" "$hq" "$hc" "$hx" "$hs" "$hy" "$dq" "$dc" "$dx" "$ds" "$dy" "$ratio"
    done
    m_ratio=$(printf '%s\n' "${ratios[@]}" | median_of)
    m_hc=$(printf '%s\n' "${ha_cpu[@]}" | median_of) m_hs=$(printf '%s\n' "${ha_srv[@]}" | median_of)
    m_dc=$(printf '%s\n' "${dal_cpu[@]}" | median_of) m_ds=$(printf '%s\n' "${dal_srv[@]}" | median_of)
    m_hx=$(printf '%s\n' "${ha_cs[@]}" | median_of) m_hy=$(printf '%s\n' "${ha_scs[@]}" | median_of)
    m_dx=$(printf '%s\n' "${dal_cs[@]}" | median_of) m_dy=$(printf '%s\n' "${dal_scs[@]}" | median_of)
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
