#!/usr/bin/env bash
# load_test.sh -- `dal load` against a throwaway MariaDB cluster that this
# script starts itself: --prepare, every workload through dal and direct
# (--json, fields and counts checked, zero errors), --duration, --compare,
# the text output, the mistakes it must refuse, --cleanup.
#
# A cluster that cannot start, a missing program or a failed check is a
# failure, never a skip.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
harness=$(cd "$here/../harness" && pwd)
builddir=${DAL_BUILDDIR:-$(cd "$here/../.." && pwd)}
DAL_BIN=${DAL_BIN:-$builddir/tools/dal}
export DAL_PLUGIN_DIR=${DAL_PLUGIN_DIR:-$builddir/plugins/.libs}
for prog in "$DAL_BIN" python3 mariadb; do
    command -v "$prog" >/dev/null || { echo "FAIL: $prog not found" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/dalload.XXXXXX")
cleanup() {
    "$harness/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

if ! "$harness/cluster.sh" start "$work/c" 4 --db 'load_%d' >/dev/null; then
    echo "FAIL: the MariaDB test cluster did not start (see above)" >&2
    exit 1
fi
mapfile -t ports <"$work/c/ports"

# The password comes from the environment, as --direct must expand it too.
export LOAD_TEST_PASSWORD=dalpass
ini="$work/load.ini"
{
    for i in 0 1 2 3; do
        printf '[datasource dbLoad%d]\nmaster = mysql://dal:${LOAD_TEST_PASSWORD}@127.0.0.1:%s/load_%d\n' \
            "$i" "${ports[$i]}" "$i"
    done
    printf '[table wm_food]\ndatasource = dbLoad\ndb_shard_num = 4\ntable_shard_num = 8\n'
    printf 'shard_key = wm_poi_id\nstrategy = mod\n'
} >"$ini"

fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
layout=(--group dbLoad --tables 8 --dbs 4 --rows 1000)
load() { "$DAL_BIN" -c "$ini" load --json -- "${layout[@]}" "$@"; }
sqlq() { mariadb -h127.0.0.1 -P"${ports[$1]}" -udal -pdalpass -N -e "$2"; }

# check.py MODE JSON ARGS: assertions on one `dal load --json` object.
cat >"$work/check.py" <<'PY'
import json, sys

what, text = sys.argv[1], sys.argv[2]
d = json.loads(text)
bad = []

def want(cond, msg):
    if not cond:
        bad.append(msg)

STEPS = {"point-select": 1, "insert": 1, "update": 1, "read-write": 5, "scatter": 1}
# rows read and rows affected per event
PER_EVENT = {"point-select": (1, 0), "insert": (0, 1), "update": (0, 1),
             "read-write": (2, 3), "scatter": (1, 0)}

def check_run(r, workload, mode, events):
    want(r["mode"] == mode, "mode %r, want %r" % (r["mode"], mode))
    want(r["errors"] == 0 and r["error"] is None, "errors: %r %r" % (r["errors"], r["error"]))
    if events is not None:
        want(r["events"] == events, "events %r, want %r" % (r["events"], events))
    n = r["events"]
    want(n > 0, "no events")
    want(r["statements"] == n * STEPS[workload], "statements %r for %r events" % (r["statements"], n))
    rows, affected = PER_EVENT[workload]
    want(r["rows"] == rows * n, "rows %r, want %r" % (r["rows"], rows * n))
    want(r["affected_rows"] == affected * n, "affected %r, want %r" % (r["affected_rows"], affected * n))
    want(r["seconds"] > 0 and r["events_per_sec"] > 0, "no time or throughput")
    want(abs(r["statements_per_sec"] - r["events_per_sec"] * STEPS[workload]) < 1, "statements_per_sec")
    lat = r["latency_us"]
    order = [lat[k] for k in ("p50", "p95", "p99", "p999", "max")]
    want(0 < order[0] and order == sorted(order), "latency percentiles out of order: %r" % lat)
    want(0 < lat["avg"] <= lat["max"], "latency avg %r" % lat)

if what == "run":
    workload, mode, events = sys.argv[3], sys.argv[4], int(sys.argv[5])
    want(d["workload"] == workload, "workload %r" % d["workload"])
    want(d["transactions"] == (workload == "read-write"), "transactions %r" % d["transactions"])
    want(d["threads"] == 2 and d["table"] == "wm_food", "threads/table %r %r" % (d["threads"], d["table"]))
    check_run(d, workload, mode, events)
elif what == "duration":
    check_run(d, "point-select", "dal", None)
    want(0.9 <= d["seconds"] <= 1.5, "measured %r s for --duration 1" % d["seconds"])
elif what == "compare":
    rounds = d["rounds"]
    want(len(rounds) == 9, "%d rounds, want 9" % len(rounds))
    for r in rounds:
        check_run(r["dal"], "point-select", "dal", 100)
        check_run(r["direct"], "point-select", "direct", 100)
        ratio = r["dal"]["events_per_sec"] / r["direct"]["events_per_sec"]
        want(abs(r["ratio"] - ratio) < 1e-3, "ratio %r, want %r" % (r["ratio"], ratio))
    ratios = sorted(r["ratio"] for r in rounds)
    want(abs(d["median_ratio"] - ratios[4]) < 1e-3, "median_ratio %r" % d["median_ratio"])
    # the sign test's interval, worked out here independently: the
    # narrowest [x(k), x(n+1-k)] covering the median with >= 95 %
    from math import comb
    n, k = len(ratios), 1
    cover = lambda k: 1 - 2 * sum(comb(n, i) for i in range(k)) / 2 ** n
    while k + 1 <= n // 2 and cover(k + 1) >= 0.95:
        k += 1
    want(abs(d["median_ratio_low"] - ratios[k - 1]) < 1e-3 and
         abs(d["median_ratio_high"] - ratios[n - k]) < 1e-3,
         "interval %r-%r, want %r-%r" % (d["median_ratio_low"], d["median_ratio_high"],
                                         ratios[k - 1], ratios[n - k]))
    want(abs(d["median_ratio_confidence"] - cover(k)) < 1e-3,
         "confidence %r, want %r" % (d["median_ratio_confidence"], cover(k)))
elif what == "failed":
    want(d["errors"] >= 1 and d["error"], "a failed run without errors: %r" % d)
else:
    want(d.get(what) == json.loads(sys.argv[3]), "%s: %r" % (what, d.get(what)))
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
check() { python3 "$work/check.py" "$@"; }

# --prepare: 1000 rows through dal, spread over the 8 physical tables
out=$(load --prepare --batch 300) || fail "prepare: $out"
check prepared_rows "$out" 1000 || fail "prepare output: $out"
total=0
for t in 0 1 2 3 4 5 6 7; do
    node=$((t / 2))
    n=$(sqlq "$node" "SELECT COUNT(*) FROM load_$node.wm_food_$t WHERE id = 9223372036854775808 + wm_poi_id AND wm_poi_id % 8 = $t")
    [ "$n" = 125 ] || fail "load_$node.wm_food_$t has $n of its 125 rows"
    total=$((total + n))
done
[ "$total" = 1000 ] || fail "prepare left $total rows, want 1000"

# every workload, through dal (by text and through prepared handles) and
# direct (by text and with server-side prepared statements), with the same
# counts
for w in point-select insert update read-write scatter; do
    for mode in dal prepared direct direct-sp; do
        flag=()
        [ "$mode" = direct ] && flag=(--direct)
        [ "$mode" = direct-sp ] && flag=(--direct --server-prepared)
        [ "$mode" = prepared ] && flag=(--prepared)
        if out=$(load "$w" "${flag[@]}" --statements 200 --warmup 100ms --threads 2 2>"$work/err"); then
            m=${mode/prepared/dal}
            check run "$out" "$w" "${m%-sp}" 200 || fail "$w $mode: $out"
            check direct_server_prepared "$out" "$([ "$mode" = direct-sp ] && echo true || echo false)" ||
                fail "$w $mode: $out"
            check prepared "$out" "$([ "$mode" = prepared ] && echo true || echo false)" ||
                fail "$w $mode: $out"
        else
            fail "$w $mode exited non-zero: $(cat "$work/err") $out"
        fi
    done
done

# inserts: generated where configured (none here), else the server's
# AUTO_INCREMENT, which starts above the prepared rows
n=$(sqlq 0 "SELECT COUNT(*) FROM load_0.wm_food_0 WHERE id >= 9223374235878031360")
[ "$n" -gt 0 ] || fail "no AUTO_INCREMENT row in load_0.wm_food_0"

# --duration is the measured time; --json may come after "--" too
out=$("$DAL_BIN" -c "$ini" load -- "${layout[@]}" point-select --duration 1 --warmup 200ms --threads 2 --json) ||
    fail "duration run: $out"
check duration "$out" || fail "duration: $out"

out=$(load point-select --compare --rounds 9 --statements 100 --warmup 0 --threads 2) || fail "compare: $out"
check compare "$out" || fail "compare: $out"

# --touch-lines: the direct side's extra memory per statement, same counts
out=$(load point-select --direct --touch-lines 1000 --statements 200 --warmup 0 --threads 2) ||
    fail "touch-lines: $out"
check run "$out" point-select direct 200 || fail "touch-lines: $out"
check direct_touch_lines "$out" 1000 || fail "touch-lines: $out"
out=$(load point-select --direct --busy-ns 2000 --statements 200 --warmup 0 --threads 2) ||
    fail "busy-ns: $out"
check run "$out" point-select direct 200 || fail "busy-ns: $out"
check direct_busy_ns "$out" 2000 || fail "busy-ns: $out"

# text output
out=$("$DAL_BIN" -c "$ini" load -- "${layout[@]}" read-write --statements 50 --warmup 0) || fail "text run: $out"
for want in "read-write through dal" "transactions  50 (" "latency (us)  avg" "errors        0"; do
    grep -qF "$want" <<<"$out" || fail "text output lacks '$want': $out"
done

# mistakes are refused with the reason
expect_exit() {   # CODE GREP-TEXT ARGS...: exit status and message of a load run
    local code=$1 text=$2 rc=0
    shift 2
    "$DAL_BIN" -c "$ini" load -- "$@" >"$work/out" 2>"$work/err" || rc=$?
    [ "$rc" = "$code" ] || fail "load $*: exit $rc, want $code"
    grep -qF "$text" "$work/err" || fail "load $*: message lacks '$text': $(cat "$work/err")"
}
expect_exit 1 "dal routes it to" "${layout[@]}" point-select --direct --tables 16 --statements 10
expect_exit 1 "no [datasource dbLoad4]" "${layout[@]}" point-select --direct --dbs 8 --statements 10
expect_exit 2 "unknown workload 'select'" "${layout[@]}" select
expect_exit 2 "not both" "${layout[@]}" point-select --duration 1 --statements 5
expect_exit 2 "not a name" "${layout[@]}" point-select --table 'x;y'
expect_exit 2 "nothing to do" "${layout[@]}"
expect_exit 2 "is for the direct side" "${layout[@]}" point-select --touch-lines 10
expect_exit 2 "at most 65536" "${layout[@]}" point-select --direct --touch-lines 65537
expect_exit 2 "is for the direct side" "${layout[@]}" point-select --busy-ns 10
expect_exit 2 "at most 10000000" "${layout[@]}" point-select --direct --busy-ns 10000001
expect_exit 1 "the dal run failed" "${layout[@]}" point-select --table nosuch --statements 10 --json
check failed "$(cat "$work/out")" || fail "failed run json: $(cat "$work/out")"
# a run that fails stops at the first error, even with a server gone
"$harness/cluster.sh" kill "$work/c" m3 >/dev/null
expect_exit 1 "dbLoad3" "${layout[@]}" point-select --direct --statements 1000
expect_exit 1 "dbLoad3" "${layout[@]}" point-select --statements 1000
"$harness/cluster.sh" restart "$work/c" m3 >/dev/null

# --cleanup drops every physical table
out=$(load --cleanup) || fail "cleanup: $out"
check cleaned_up "$out" true || fail "cleanup output: $out"
for i in 0 1 2 3; do
    n=$(sqlq "$i" "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'load_$i'")
    [ "$n" = 0 ] || fail "load_$i still has $n tables after --cleanup"
done

[ "$fails" -eq 0 ] || { echo "$fails dal load checks failed" >&2; exit 1; }
echo "dal load checks passed"
