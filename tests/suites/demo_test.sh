#!/usr/bin/env bash
# demo_test.sh -- the README's quick start, checked: run examples/demo.sh
# (its first command) and check what it shows, so that a change which
# breaks the demo, or makes it show something wrong, fails CI.
#
#   bash tests/suites/demo_test.sh
#
# Needs what the demo needs (it installs missing packages itself) and the
# build in _build/ (made by the demo if missing).
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp "${TMPDIR:-/tmp}/daldemo-out.XXXXXX")
trap 'rm -f "$out"' EXIT
fail() {
    echo "FAIL: demo: $*" >&2
    tail -40 "$out" >&2
    exit 1
}

bash "$src/examples/demo.sh" >"$out" 2>&1 || fail "examples/demo.sh exited with $?"
# the escape sequences of its headings are not part of what is checked
sed -i 's/\x1b\[[0-9;]*m//g' "$out"

grep -q '^demo done; the cluster is stopped and removed\.$' "$out" || fail "it did not finish"
# `dal check` accepted the configuration
grep -q '^\$ dal -c demo.ini check' "$out" || fail "no check step"
# every row inserted through dal is found, by plain SQL, in the physical
# table the mod formula names (the demo computes that table itself)
found=$(grep -c -- '-> 1 row$' "$out" || true)
[ "$found" -eq 6 ] || fail "$found of the 6 rows were where the formula puts them"
! grep -q -- '-> 0 row$' "$out" || fail "a row is missing from its physical table"
# the routed SELECT returned the two rows of wm_poi_id 12345
grep -q '^2 rows$' "$out" || fail "the SELECT by shard value did not return 2 rows"
# explain --json routed shard value 99999 to wm_food_99 on dbProductSku3
grep -q '"datasource":"dbProductSku3".*"table":"wm_food_99"' "$out" ||
    fail "explain did not route 99999 to dbProductSku3.wm_food_99"
# the mariadb client through dal-proxy: the logical table, its rows, and
# the count and sum over all 100 physical tables
grep -q '^| wm_food *|$' "$out" || fail "SHOW TABLES through dal-proxy did not list wm_food"
grep -qE '^\| +6 \| +153\.90 \|$' "$out" || fail "COUNT and SUM through dal-proxy are not 6 and 153.90"
# the scrape while the load ran shows the statement counter
grep -qE '^dal_statements_total\{kind="select",table="wm_food"\} [1-9][0-9]*$' "$out" ||
    fail "no dal_statements_total in the metrics scraped during the load"
# the load: no errors, and every point select found its row
statements=$(awk '$1 == "statements" { print $2 }' "$out")
read_rows=$(awk '$1 == "rows" { print $2 }' "$out")
errors=$(awk '$1 == "errors" { print $2 }' "$out")
[ -n "$statements" ] && [ "$statements" -gt 0 ] || fail "the load ran no statements"
[ "$errors" = 0 ] || fail "the load had $errors errors"
[ "$read_rows" = "$statements" ] || fail "the load read $read_rows rows for $statements point selects"
echo "demo: every step showed what it should ($statements point selects, 0 errors)"
