#!/usr/bin/env bash
# idgen_test.sh -- the ID generators against a real MariaDB that this script
# starts itself (tests/harness/cluster.sh): `dal idgen init/next`, 8 processes x 8
# threads on one biz tag, kill -9 and restart, the step growing, snowflake
# worker id leases across processes and the spread mod 100, and a database
# outage.  Any problem is a failure (exit 1), never a skip.
#
# The segments are checked against the database's own record: a trigger on
# leaf_alloc writes every change of max_id to leaf_alloc_log.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
harness=$(cd "$here/../harness" && pwd)
builddir=${DAL_BUILDDIR:-$(cd "$here/../.." && pwd)}
stress=$builddir/tests/live/idgen_stress
dal=${DAL_BIN:-$builddir/tools/dal}
work=$(mktemp -d "${TMPDIR:-/tmp}/dalidgen.XXXXXX")
pids=()

cleanup() {
    local p
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    "$harness/cluster.sh" stop "$work/c" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
ok() { echo "ok - $*"; }

# No scenario may hang: each run of the stress program gets a deadline.
st() { timeout 600 "$stress" "$@"; }
sql() { "$harness/cluster.sh" client "$work/c" m0 -N -B leaf -e "$1"; }

[[ -x $stress ]] || fail "$stress is not built"
[[ -x $dal ]] || fail "$dal is not built"
if ! "$harness/cluster.sh" start "$work/c" 1 --db leaf --db spare >/dev/null; then
    fail "the MariaDB test cluster did not start (see above)"
fi
port=$("$harness/cluster.sh" port "$work/c" m0)
ini=$work/idgen.ini
cat >"$ini" <<EOF
[datasource leafdb]
master = mysql://dal:dalpass@127.0.0.1:$port/leaf
connect_timeout = 1s
read_timeout = 5s

[datasource spare]
master = mysql://dal:dalpass@127.0.0.1:$port/spare

# many processes, small segments: thousands of contended reservations
[idgen sku]
plugin = leaf
datasource = leafdb
step = 100
max_step = 2000
description = stress

[idgen restart]
plugin = leaf
datasource = leafdb
step = 500

[idgen grow]
plugin = leaf
datasource = leafdb
step = 1000
max_step = 64000

[idgen outage]
plugin = leaf
datasource = leafdb
step = 5000
max_step = 5000
wait_timeout = 1s

[idgen sfl]
plugin = snowflake
lease_datasource = leafdb
lease_time = 5s

[idgen sf]
plugin = snowflake
worker_id = 1
EOF

# ------------------------------------------------------------- the CLI
out=$("$dal" -c "$ini" idgen init) || fail "idgen init: $out"
grep -q "^sku: leaf_alloc on leafdb: biz tag 'sku' created$" <<<"$out" || fail "init said: $out"
grep -q "^sfl: dal_worker_lease on leafdb: worker ids created$" <<<"$out" || fail "init said: $out"
out=$("$dal" -c "$ini" idgen init --json) || fail "idgen init again: $out"
grep -q '"created":true' <<<"$out" && fail "a second init created something: $out"
[[ $(sql "SELECT COUNT(*) FROM dal_worker_lease") == 1024 ]] || fail "lease table rows"
[[ $(sql "SELECT CONCAT(max_id, ' ', step, ' ', description) FROM leaf_alloc WHERE biz_tag = 'sku'") \
    == "1 100 stress" ]] || fail "the sku row is not as configured"
ok "dal idgen init creates the tables and biz tags, and a second run changes nothing"

out=$("$dal" -c "$ini" idgen init --datasource spare) || fail "idgen init --datasource: $out"
grep -q "^grow: leaf_alloc on spare: biz tag 'grow' created$" <<<"$out" || fail "init said: $out"
[[ $("$harness/cluster.sh" client "$work/c" m0 -N -B spare -e "SELECT COUNT(*) FROM leaf_alloc") \
    == 4 ]] || fail "init --datasource spare did not create the four biz tags there"
if "$dal" -c "$ini" idgen init --datasource nosuch 2>"$work/err"; then
    fail "init on an unknown datasource succeeded"
fi
grep -q "datasource 'nosuch' is not defined" "$work/err" || fail "unclear: $(cat "$work/err")"
ok "dal idgen init --datasource sets up another datasource, and names an unknown one"

sql "CREATE TABLE leaf_alloc_log (biz_tag VARCHAR(128) NOT NULL, old_max BIGINT NOT NULL,
       new_max BIGINT NOT NULL, KEY (biz_tag, old_max));
     CREATE TRIGGER leaf_alloc_audit AFTER UPDATE ON leaf_alloc FOR EACH ROW
       INSERT INTO leaf_alloc_log VALUES (NEW.biz_tag, OLD.max_id, NEW.max_id)"

out=$("$dal" -c "$ini" idgen next restart 3) || fail "idgen next: $out"
[[ $out == $'1\n2\n3' ]] || fail "idgen next printed: $out"
out=$("$dal" -c "$ini" idgen next sf 2 --json) || fail "idgen next --json: $out"
[[ $out =~ ^\{\"idgen\":\"sf\",\"ids\":\[[0-9]+,[0-9]+\]\}$ ]] || fail "idgen next --json printed: $out"
if "$dal" -c "$ini" idgen next nosuch 2>"$work/err"; then fail "an unknown generator drew IDs"; fi
grep -q "no \[idgen nosuch\] section" "$work/err" || fail "unclear error: $(cat "$work/err")"
ok "dal idgen next prints IDs, as text and JSON, and names an unknown generator"

# ------------------------------------------ 8 processes x 8 threads, one tag
for i in 1 2 3 4 5 6 7 8; do
    st draw "$ini" sku 8 4000 "$work/sku.$i" >/dev/null &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a drawing process failed"; done
pids=()
st check "$ini" leafdb sku 256000 "$work"/sku.* || fail "8 x 8 uniqueness"
ok "8 processes x 8 threads: 256000 IDs, no duplicate, all in recorded segments"

# --------------------------------------------------- kill -9, then again
# not through st(): kill -9 must hit the drawing process itself
"$stress" draw "$ini" restart 4 0 "$work/restart.1" >/dev/null &
pids+=($!)
sleep 2
kill -9 "${pids[0]}"
wait "${pids[0]}" 2>/dev/null || true
pids=()
[[ -s $work/restart.1 ]] || fail "the killed process wrote no IDs"
max=$(sql "SELECT max_id FROM leaf_alloc WHERE biz_tag = 'restart'")
st draw "$ini" restart 4 5000 "$work/restart.2" >/dev/null || fail "drawing after the kill"
st above "$max" "$work/restart.2" || fail "an ID was reissued after kill -9"
st check "$ini" leafdb restart 20000 "$work/restart.1" "$work/restart.2" || fail "restart check"
ok "kill -9 mid-run, start again: no ID reissued"

# ------------------------------------------------------------ dynamic step
st steps "$ini" grow leafdb grow 300000 || fail "dynamic step"
ok "a fast consumer sees the step grow, and leaf_alloc reflects it"

# -------------------------------------------------------------- snowflake
for i in 1 2 3 4; do
    st draw "$ini" sfl 8 10000 "$work/sf.$i" >/dev/null &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a snowflake process failed"; done
pids=()
st unique 320000 "$work"/sf.* || fail "snowflake uniqueness"
ok "snowflake: 4 processes x 8 threads with leased worker ids, no duplicate"
st spread "$ini" sf 3000 || fail "snowflake spread"
ok "snowflake: IDs made slowly spread over mod 100"

# ------------------------------------------------------ the database goes away
st outage "$ini" outage 5000 "'$harness/cluster.sh' kill '$work/c' m0 >/dev/null" \
    "'$harness/cluster.sh' restart '$work/c' m0 >/dev/null" || fail "outage"
ok "outage: buffered IDs keep coming, then a clear error in bounded time, then IDs resume"
