#!/usr/bin/env bash
# cli_test.sh - tests of the `dal` command-line program that need no database.
#
# Environment:
#   DAL_BIN         the built dal program (required)
#   DAL_PLUGIN_DIR  directory holding shard_mod.so, shard_range.so, shard_hash.so
#
# explain routes and rewrites without connecting, so the configuration below
# points at a port where nothing listens.  Exit status: 0 all passed, 1 some
# failed, 77 skipped (Automake's convention), 99 the test could not run.

set -u

if [[ -z ${DAL_BIN:-} || ! -x ${DAL_BIN:-} ]]; then
	echo "cli_test: DAL_BIN must name the built dal program" >&2
	exit 99
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "cli_test: python3 is needed to validate JSON output; skipping" >&2
	exit 77
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/dal-cli-test.XXXXXX") || exit 99
trap 'rm -rf "$TMP"' EXIT
unset DAL_CONFIG
failures=0
count=0

# ------------------------------------------------------------------ helpers

# run ARGS...: run dal; leaves $TMP/out, $TMP/err and $rc.
run() {
	"$DAL_BIN" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

# run_stdin INPUT ARGS...: the same with INPUT on standard input.
run_stdin() {
	local input=$1
	shift
	printf '%s' "$input" | "$DAL_BIN" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

pass() {
	count=$((count + 1))
	echo "ok $count - $1"
}

fail() {
	count=$((count + 1))
	failures=$((failures + 1))
	echo "not ok $count - $1"
	echo "#   exit status: $rc"
	sed 's/^/#   stdout: /' "$TMP/out"
	sed 's/^/#   stderr: /' "$TMP/err"
}

# check DESCRIPTION CONDITION...: pass if the condition (a command) succeeds.
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}

rc_is() { [[ $rc -eq $1 ]]; }
out_matches() { grep -Eq -- "$1" "$TMP/out"; }
# err_starts PREFIX: some line of stderr starts with PREFIX (log warnings
# from the library may come first).
err_starts() { awk -v p="$1" 'index($0, p) == 1 { f = 1 } END { exit !f }' "$TMP/err"; }
valid_json() { python3 -m json.tool "$TMP/out" >/dev/null 2>&1; }

# json_ok PYTHON-EXPRESSION: the expression over `j` (the parsed stdout) is true.
json_ok() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$TMP/out" "$1" 2>/dev/null
}

usage_error() {
	local what=$1
	shift
	run "$@"
	check "usage error exits 2: $what" rc_is 2
	check "usage error is reported as 'dal: ...': $what" err_starts "dal: "
}

# ----------------------------------------------------------------- configs

GOOD=$TMP/good.ini
BAD=$TMP/bad.ini

# MTDDL's mod strategy: table = v % 100, db = table / (100 / 2).
cat >"$GOOD" <<'EOF'
; two product databases, wm_food split into 100 tables
[datasource dbProductSku0]
master = mysql://dal:dalpass@127.0.0.1:1/product_0

[datasource dbProductSku1]
master = mysql://dal:dalpass@127.0.0.1:1/product_1

[table wm_food]
datasource = dbProductSku
db_shard_num = 2
table_shard_num = 100
shard_key = wm_poi_id
strategy = mod
EOF

cat >"$BAD" <<'EOF'
[datasource dbProductSku0]
master = mysql://dal:dalpass@127.0.0.1:1/product_0
no_such_key = 1
EOF

SQL='SELECT name FROM wm_food WHERE wm_poi_id = ?'

# ------------------------------------------------------------ usage errors

usage_error "no command"
usage_error "unknown command" frobnicate
usage_error "unknown option" --frobnicate version
usage_error "option without its value" -c
usage_error "option of another command" -c "$GOOD" check --shard-value 1
usage_error "exec without SQL" -c "$GOOD" exec
usage_error "extra argument" version extra
usage_error "no configuration file" check

# ---------------------------------------------------------- version, help

run --version
check "--version exits 0" rc_is 0
check "--version prints 'dal X.Y.Z'" out_matches '^dal [0-9]+\.[0-9]+\.[0-9]+$'

run version --json
check "version --json is valid JSON" valid_json
check "version --json has the version" json_ok 'j["version"].count(".") == 2'

run --help
check "--help exits 0" rc_is 0
check "--help shows the usage" out_matches '^Usage: dal '

run exec --help
check "exec --help exits 0" rc_is 0
check "exec --help shows the exec usage" out_matches 'exec \[--json\]'

# ----------------------------------------------------------------- plugins

if [[ -n ${DAL_PLUGIN_DIR:-} ]]; then
	run plugins --dir "$DAL_PLUGIN_DIR"
	check "plugins exits 0" rc_is 0
	for name in mod range hash; do
		check "plugins lists shard_$name" out_matches "^shard +$name .*shard_$name\.so"
	done

	run plugins --json --dir "$DAL_PLUGIN_DIR"
	check "plugins --json is valid JSON" valid_json
	check "plugins --json has the three shard strategies" \
		json_ok '{"mod", "range", "hash"} <= {p["name"] for p in j["plugins"] if p["kind"] == "shard" and p["error"] is None}'
else
	echo "# DAL_PLUGIN_DIR not set: plugins, check and explain tests skipped"
fi

run plugins --dir "$TMP/no-such-dir"
check "plugins on a missing directory exits 1" rc_is 1
check "plugins on a missing directory says so" err_starts "dal: "

# -------------------------------------------- everything below needs plugins

if [[ -z ${DAL_PLUGIN_DIR:-} ]]; then
	echo "1..$count"
	[[ $failures -eq 0 ]]
	exit
fi

# ------------------------------------------------------------------- check

run -c "$GOOD" check
check "check of a good file exits 0" rc_is 0
check "check of a good file prints FILE: ok" out_matches "^$GOOD: ok\$"

DAL_CONFIG=$GOOD run check
check "check takes the file from DAL_CONFIG" rc_is 0

run check -c "$BAD"
check "check of a bad file exits 1" rc_is 1
check "check names FILE:LINE of the mistake" err_starts "dal: $BAD:3: "

run check --json -c "$BAD"
check "check --json of a bad file exits 1" rc_is 1
check "check --json is valid JSON" valid_json
check "check --json reports DAL_ECONFIG at FILE:LINE" \
	json_ok "j['ok'] is False and j['error']['code'] == 'DAL_ECONFIG' and j['error']['message'].startswith('$BAD:3: ')"

run -c "$GOOD" check --json
check "check --json of a good file says ok" json_ok 'j == {"ok": True}'

# -------------------------------------------------------------------- diff

# every [dal] key with one value is reported OLD -> NEW
{ printf '[dal]\nserver_prepare = off\nserver_prepare_cache = 8\ntransaction_mode = multi\nxa_grace = 1500ms\nmax_parallel = 4\n\n'; cat "$GOOD"; } >"$TMP/dalkeys.ini"
run -c "$GOOD" diff "$TMP/dalkeys.ini"
check "diff of [dal] keys exits 0" rc_is 0
check "diff reports server_prepare" out_matches '^dal +server_prepare +auto -> off$'
check "diff reports server_prepare_cache" out_matches '^dal +server_prepare_cache +64 -> 8$'
check "diff reports transaction_mode" out_matches '^dal +transaction_mode +single -> multi$'
check "diff reports xa_grace as a duration" out_matches '^dal +xa_grace +60s -> 1500ms$'
check "diff reports max_parallel" out_matches '^dal +max_parallel +8 -> 4$'
run -c "$GOOD" diff "$GOOD"
check "diff of a file with itself says no changes" out_matches "^no changes$"

# ----------------------------------------------------------------- explain

run -c "$GOOD" explain --json --shard-value 99 "$SQL" 99
check "explain --json exits 0" rc_is 0
check "explain --json is valid JSON" valid_json
check "explain --json has a route with datasource and sql" \
	json_ok 'j["kind"].lower() == "select" and len(j["routes"]) >= 1 and all(r["datasource"] and r["sql"] for r in j["routes"])'
check "explain --json routes 99 to dbProductSku1.wm_food_99" \
	json_ok 'j["routes"][0]["datasource"] == "dbProductSku1" and j["routes"][0]["table"] == "wm_food_99" and "wm_food_99" in j["routes"][0]["sql"]'

run explain -c "$GOOD" --shard-value 1045 'SELECT name FROM wm_food'
check "explain --shard-value exits 0" rc_is 0
check "explain text shows DATASOURCE (SERVER) TABLE: SQL" \
	out_matches '^dbProductSku0 \([^)]+\) wm_food_45: .*wm_food_45'

run -c "$GOOD" explain "$SQL"
check "explain with a parameter missing exits 1" rc_is 1
check "explain with a parameter missing reports 'dal: ...'" err_starts "dal: "

# ------------------------------------------------------------------- shell

run_stdin '\explain SELECT name FROM wm_food WHERE wm_poi_id = 99;
' -c "$GOOD" shell --shard-value 99
check "shell reads statements from a pipe" rc_is 0
check "shell \\explain prints the route" out_matches '^dbProductSku1 .*wm_food_99'

run_stdin '\json
\shard 99
\explain SELECT name FROM wm_food
' -c "$GOOD" shell
check "shell \\json \\shard \\explain prints one JSON object" valid_json
check "shell uses the \\shard value" json_ok 'j["routes"][0]["table"] == "wm_food_99"'

run_stdin '\nosuchcommand
' -c "$GOOD" shell
check "shell exits 1 when a command failed" rc_is 1
check "shell names the input line of an error" err_starts "dal: line 1: "

# ------------------------------------------- passwords never reach a message

# A URL under keys that take none (defect 8): every command that reports the
# mistake quotes the value with its password masked.
no_secret() { ! grep -q 's3cret' "$TMP/out" "$TMP/err"; }
LEAK=$TMP/leak.ini
for key in 'table:datasource' 'datasource:load_balance' 'dal:default_datasource'; do
	case $key in
	table:*) printf '[datasource d]\nmaster = mysql://dal:dalpass@127.0.0.1:1/p\n[table t]\ndatasource = mysql://app:s3cret@host/db\n' >"$LEAK" ;;
	datasource:*) printf '[datasource d]\nmaster = mysql://dal:dalpass@127.0.0.1:1/p\nload_balance = mysql://app:s3cret@host/db\n' >"$LEAK" ;;
	dal:*) printf '[dal]\ndefault_datasource = app:s3cret@host\n' >"$LEAK" ;;
	esac
	run -c "$LEAK" check
	check "check names FILE:LINE of a URL under ${key#*:}" err_starts "dal: $LEAK:"
	check "check masks the password of a URL under ${key#*:}" no_secret
	check "check shows the masked value under ${key#*:}" grep -q ':\*\*\*@host' "$TMP/err"
	run -c "$LEAK" check --json
	check "check --json masks the password under ${key#*:}" no_secret
	check "check --json is valid JSON under ${key#*:}" valid_json
	run -c "$LEAK" explain 'SELECT 1'
	check "explain masks the password under ${key#*:}" no_secret
	check "explain fails on the file under ${key#*:}" rc_is 1
	run -c "$LEAK" exec 'SELECT 1'
	check "exec masks the password under ${key#*:}" no_secret
	check "exec fails on the file under ${key#*:}" rc_is 1
done

# ----------------------------------------------------------- typed PARAMs

LIMIT_SQL='SELECT name FROM wm_food WHERE wm_poi_id = ? LIMIT ?'
run -c "$GOOD" explain "$LIMIT_SQL" int:100 int:10
check "explain with int: parameters exits 0" rc_is 0
check "explain inlines int:10 unquoted (LIMIT 10)" out_matches 'LIMIT 10$'
check "explain inlines int:100 unquoted (= 100)" out_matches '= 100 LIMIT'

run -c "$GOOD" explain "$SQL" 100
check "an untyped PARAM stays text (= '100')" out_matches "= '100'"

# A column that is not the shard key, for values mod cannot route by.
NAME_SQL='SELECT name FROM wm_food WHERE wm_poi_id = 1 AND name = ?'
run -c "$GOOD" explain "$NAME_SQL" str:int:100
check "str: passes text that starts with a prefix" out_matches "= 'int:100'\$"

run -c "$GOOD" explain "$SQL" uint:18446744073709551615
check "uint: takes the whole unsigned range" out_matches '= 18446744073709551615'

run -c "$GOOD" explain "$NAME_SQL" double:1.5
check "double:1.5 is inlined as a number" out_matches '= 1\.5'

run -c "$GOOD" explain "$NAME_SQL" hex:00ff
check "hex:00ff is inlined as bytes" out_matches "= [xX]'00[fF][fF]'\$"

for null in null NULL null:; do
	run -c "$GOOD" explain "$NAME_SQL" "$null"
	check "$null is SQL NULL" out_matches '= NULL$'
done

run -c "$GOOD" explain --shard-value int:99 'SELECT name FROM wm_food'
check "--shard-value int:99 routes to wm_food_99" out_matches 'wm_food_99'

usage_error "int:abc" -c "$GOOD" explain "$SQL" int:abc
check "int:abc names the parameter and the value" err_starts "dal: parameter 1 'int:abc': int: takes"
usage_error "int: out of range" -c "$GOOD" exec "$SQL" int:9223372036854775808
usage_error "uint: negative" -c "$GOOD" explain "$SQL" uint:-1
usage_error "double: not a number" -c "$GOOD" explain "$SQL" double:nan
usage_error "hex: odd digits" -c "$GOOD" explain "$SQL" hex:abc
usage_error "null: with a value" -c "$GOOD" explain "$SQL" null:x
usage_error "--shard-value int:x" -c "$GOOD" explain --shard-value int:x "$SQL" 1
usage_error "shell --shard-value int:x" -c "$GOOD" shell --shard-value int:x

run_stdin '\shard int:abc
\shard int:99
\explain SELECT name FROM wm_food
' -c "$GOOD" shell
check "shell refuses \\shard int:abc" grep -qF "dal: line 1: \\shard 'int:abc': int: takes" "$TMP/err"
check "shell keeps typed \\shard int:99" out_matches 'wm_food_99'

run explain --help
check "explain --help documents typed parameters" out_matches 'int:-5'

echo "1..$count"
[[ $failures -eq 0 ]]
