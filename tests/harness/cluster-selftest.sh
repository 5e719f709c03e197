#!/usr/bin/env bash
# cluster-selftest.sh - check that tests/harness/cluster.sh works on this machine.
#
# Starts a cluster of 2 masters with 1 replica each in a fresh temporary
# directory and checks accounts, server settings, --db 'product_%d',
# replication, kill + restart of a replica and of a master, clean failure of
# start on a non-empty directory and on an instance that cannot start, and
# stop. The cluster is always stopped on exit. Exits 0 only if every check
# passed; each failed check is printed. The temporary directory is removed on
# success and kept (with the server logs) on failure.
#
# Usage: tests/harness/cluster-selftest.sh [-v]      (-v: show cluster.sh messages)

# Functions called only through check/trap look unreachable to shellcheck.
# shellcheck disable=SC2317

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
CLUSTER=$HERE/cluster.sh
VERBOSE=0
if [[ ${1:-} == -v ]]; then
	VERBOSE=1
fi

FAILS=0
CHECKS=0
ok() {
	CHECKS=$((CHECKS + 1))
	echo "ok   - $*"
}
fail() {
	CHECKS=$((CHECKS + 1))
	FAILS=$((FAILS + 1))
	echo "FAIL - $*"
}
# check DESCRIPTION COMMAND...: run COMMAND, record the result.
check() {
	local what=$1
	shift
	if "$@"; then
		ok "$what"
	else
		fail "$what"
	fi
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/dalcs.XXXXXX")
C=$TMP/c
LOG=$TMP/cluster.log

cleanup() {
	local rc=$?
	"$CLUSTER" stop "$C" >>"$LOG" 2>&1 || true
	"$CLUSTER" stop "$TMP/bad" >>"$LOG" 2>&1 || true
	if [[ -n $(procs_under "$TMP") ]]; then
		echo "FAIL - processes left running after stop: $(procs_under "$TMP")"
		rc=1
	fi
	if ((rc == 0 && FAILS == 0)); then
		rm -rf "$TMP"
	else
		echo "# logs kept in $TMP"
		if ((!VERBOSE)) && [[ -s $LOG ]]; then
			echo "# cluster.sh messages:"
			while IFS= read -r line; do
				echo "#   $line"
			done <"$LOG"
		fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run cluster.sh, its messages go to $LOG (and to stderr with -v).
cl() {
	if ((VERBOSE)); then
		"$CLUSTER" "$@" 2> >(tee -a "$LOG" >&2)
	else
		"$CLUSTER" "$@" 2>>"$LOG"
	fi
}

# procs_under DIR: pids of processes whose command line mentions DIR.
procs_under() {
	local p cmd pids=() args=()
	for p in /proc/[0-9]*; do
		[[ -r $p/cmdline ]] || continue
		mapfile -d '' -t args 2>/dev/null <"$p/cmdline" || continue
		cmd=${args[*]-}
		if [[ $cmd == *mariadbd* && $cmd == *"$1/"* ]]; then
			pids+=("${p#/proc/}")
		fi
	done
	echo "${pids[*]-}"
}

# q NAME SQL: run SQL as root on instance NAME, raw output.
q() {
	local port
	port=$("$CLUSTER" port "$C" "$1")
	timeout 30 mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P"$port" -uroot \
		--connect-timeout=2 -N -B -e "$2"
}

# wait_for NAME SQL EXPECTED SECONDS: poll until SQL on NAME prints EXPECTED.
wait_for() {
	local name=$1 sql=$2 want=$3 secs=$4 got i
	for ((i = 0; i < secs * 10; i++)); do
		got=$(q "$name" "$sql" 2>/dev/null) || got="<error>"
		if [[ $got == "$want" ]]; then
			return 0
		fi
		sleep 0.1
	done
	echo "#   $name: '$sql' gave '$got', expected '$want'"
	return 1
}

slave_field() {
	local port
	port=$("$CLUSTER" port "$C" "$1")
	timeout 30 mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P"$port" -uroot \
		--connect-timeout=2 -E -e 'SHOW SLAVE STATUS' | while IFS= read -r line; do
		line=${line#"${line%%[! ]*}"}
		if [[ $line == "$2: "* ]]; then
			echo "${line#"$2: "}"
		fi
	done
}

replication_running() {
	local i
	for ((i = 0; i < 100; i++)); do
		if [[ $(slave_field "$1" Slave_IO_Running) == Yes &&
			$(slave_field "$1" Slave_SQL_Running) == Yes ]]; then
			return 0
		fi
		sleep 0.1
	done
	echo "#   $1: Slave_IO_Running=$(slave_field "$1" Slave_IO_Running)" \
		"Slave_SQL_Running=$(slave_field "$1" Slave_SQL_Running)" \
		"Last_IO_Error=$(slave_field "$1" Last_IO_Error)" \
		"Last_SQL_Error=$(slave_field "$1" Last_SQL_Error)"
	return 1
}

status_of() {
	"$CLUSTER" status "$C" | while read -r n p s; do
		if [[ $n == "$1" ]]; then
			echo "$s"
		fi
	done
}

count_status() {
	local n=0 name port state
	while read -r name port state; do
		if [[ $state == "$1" ]]; then
			n=$((n + 1))
		fi
	done < <("$CLUSTER" status "$C")
	echo "$n"
}

ms() {
	local t=${EPOCHREALTIME/[.,]/}
	echo $((t / 1000))
}

# ------------------------------------------------------------------ start --

echo "# cluster directory: $C"
t0=$(ms)
if ! out=$(cl start "$C" 2 --replicas 1 --db 'product_%d' --db shared); then
	fail "start 2 masters with 1 replica each"
	exit 1
fi
t1=$(ms)
ok "start 2 masters with 1 replica each ($(((t1 - t0) / 1000)).$(printf '%03d' $(((t1 - t0) % 1000)))s)"

mapfile -t ports <<<"$out"
check "start printed 2 master ports" test "${#ports[@]}" -eq 2
check "DIR/ports matches what start printed" test "$(cat "$C/ports")" == "$out"
check "DIR/replica_ports has one line per replica" \
	test "$(cut -d' ' -f1,2 "$C/replica_ports" | tr '\n' ,)" == "0 0,1 0,"
env_ok() (
	# shellcheck source=/dev/null
	. "$C/env"
	[[ $DAL_TEST_PORTS == "${ports[*]}" && $DAL_TEST_CLUSTER_DIR == "$C" &&
		$DAL_TEST_REPLICA_PORTS == "$(cut -d' ' -f3 "$C/replica_ports" | paste -s -d' ')" ]]
)
check "DIR/env is sourceable and consistent" env_ok
check "port m0 is the first master port" test "$("$CLUSTER" port "$C" m0)" == "${ports[0]}"
check "status: all 4 instances up" \
	test "$(count_status up)" -eq 4

# ---------------------------------------------------- accounts, settings --

p0=${ports[0]}
check "root without password over TCP at 127.0.0.1" \
	test "$(mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P"$p0" -uroot -NBe 'SELECT 1' 2>&1)" == 1
check "root without password over TCP via 'localhost'" \
	test "$(mariadb --no-defaults --protocol=TCP -hlocalhost -P"$p0" -uroot -NBe 'SELECT 1' 2>&1)" == 1
check "dal/dalpass over TCP, with all privileges" \
	test "$(mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P"$p0" -udal -pdalpass -NBe \
		'CREATE DATABASE dal_priv_check; DROP DATABASE dal_priv_check; SELECT CURRENT_USER()' 2>&1)" == 'dal@%'
check "wrong dal password is refused" \
	test "$(mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P"$p0" -udal -pwrong -NBe 'SELECT 1' 2>/dev/null || echo refused)" == refused
ids=$(for n in m0 m1 m0-r0 m1-r0; do q "$n" 'SELECT @@server_id'; done | sort -u | wc -l)
check "server_id is unique across the 4 instances" test "$ids" -eq 4
check "masters: log_bin=1, binlog_format=ROW, log_slave_updates=1" \
	test "$(q m0 'SELECT @@log_bin, @@binlog_format, @@log_slave_updates')$(q m1 'SELECT @@log_bin, @@binlog_format, @@log_slave_updates')" == \
	"$(printf '1\tROW\t1')$(printf '1\tROW\t1')"
check "performance_schema is off" test "$(q m0 'SELECT @@performance_schema')" == 0
check "replicas use GTID slave_pos" test "$(slave_field m0-r0 Using_Gtid)" == Slave_Pos

# ------------------------------------------------------------ databases --

dbs() {
	q "$1" "SELECT GROUP_CONCAT(SCHEMA_NAME ORDER BY SCHEMA_NAME) FROM information_schema.SCHEMATA
		WHERE SCHEMA_NAME LIKE 'product\\_%' OR SCHEMA_NAME = 'shared'"
}
check "--db 'product_%d': m0 has product_0 (and shared)" test "$(dbs m0)" == product_0,shared
check "--db 'product_%d': m1 has product_1 (and shared)" test "$(dbs m1)" == product_1,shared
check "m0-r0 has m0's databases when start returns" test "$(dbs m0-r0)" == product_0,shared
check "m1-r0 has m1's databases when start returns" test "$(dbs m1-r0)" == product_1,shared

# ---------------------------------------------------------- replication --

q m0 'CREATE TABLE product_0.t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB;
	INSERT INTO product_0.t VALUES (1, "one")'
check "row inserted on m0 appears on m0-r0 within 10s" \
	wait_for m0-r0 'SELECT v FROM product_0.t WHERE id = 1' one 10

# ---------------------------------------------------- kill/restart replica --

rport=$("$CLUSTER" port "$C" m0-r0)
check "kill m0-r0" cl kill "$C" m0-r0
check "status: m0-r0 down after kill" test "$(status_of m0-r0)" == down
check "status: m0 still up" test "$(status_of m0)" == up
q m0 'INSERT INTO product_0.t VALUES (2, "two")'
check "restart m0-r0" cl restart "$C" m0-r0
check "m0-r0 is back on the same port" test "$("$CLUSTER" port "$C" m0-r0)" == "$rport"
check "status: m0-r0 up after restart" test "$(status_of m0-r0)" == up
check "m0-r0 replication threads running after restart" replication_running m0-r0
check "row inserted while m0-r0 was down reaches it within 10s" \
	wait_for m0-r0 'SELECT v FROM product_0.t WHERE id = 2' two 10
q m0 'INSERT INTO product_0.t VALUES (3, "three")'
check "row inserted after restart reaches m0-r0 within 10s" \
	wait_for m0-r0 'SELECT COUNT(*) FROM product_0.t' 3 10
check "restart of a running instance is a no-op" cl restart "$C" m0-r0

# ----------------------------------------------------- kill/restart master --

check "kill m1 (a master)" cl kill "$C" m1
check "kill of an instance that is down succeeds" cl kill "$C" m1
check "restart m1" cl restart "$C" m1
q m1 'CREATE TABLE product_1.t (id INT PRIMARY KEY) ENGINE=InnoDB; INSERT INTO product_1.t VALUES (7)' ||
	fail "write on m1 after its restart"
check "m1-r0 resumes replication from the restarted m1 within 10s" \
	wait_for m1-r0 'SELECT id FROM product_1.t' 7 10

# ------------------------------------------------------- failing starts --

mkdir "$TMP/full"
echo keep >"$TMP/full/file"
before=$(procs_under "$TMP/full")
if msg=$("$CLUSTER" start "$TMP/full" 1 2>&1); then
	fail "start into a non-empty directory fails"
else
	ok "start into a non-empty directory fails"
fi
check "... with a message saying why" grep -q 'not empty' <<<"$msg"
check "... leaving the directory untouched" test "$(ls -A "$TMP/full")" == file
check "... and starting no process" test "$(procs_under "$TMP/full")" == "$before"

# An instance that cannot start: a mariadbd wrapper that breaks m1 only.
cat >"$TMP/broken-mariadbd" <<EOF
#!/bin/sh
case "\$*" in
*/m1/my.cnf*) exec "$(command -v mariadbd || echo /usr/sbin/mariadbd)" "\$@" --no-such-option-for-the-selftest ;;
esac
exec "$(command -v mariadbd || echo /usr/sbin/mariadbd)" "\$@"
EOF
chmod +x "$TMP/broken-mariadbd"
if msg=$(DAL_MARIADBD=$TMP/broken-mariadbd "$CLUSTER" start "$TMP/bad" 3 --replicas 1 2>&1); then
	fail "start with an instance that cannot start fails"
else
	ok "start with an instance that cannot start fails"
fi
check "... printing that instance's error log" grep -q 'no-such-option-for-the-selftest' <<<"$msg"
check "... and leaving no mariadbd running" test -z "$(procs_under "$TMP/bad")"

# ----------------------------------------------------------------- stop --

check "stop" cl stop "$C"
check "no mariadbd left running after stop" test -z "$(procs_under "$C")"
check "status: all down after stop" \
	test "$(count_status down)" -eq 4
check "stop again (all already down) succeeds" cl stop "$C"
check "restart after stop works" cl restart "$C" m0
check "data survived stop + restart" test "$(q m0 'SELECT COUNT(*) FROM product_0.t')" == 3
check "stop --clean removes the directory" cl stop "$C" --clean
check "... it is gone" test ! -e "$C"

echo "# $((CHECKS - FAILS))/$CHECKS checks passed"
if ((FAILS)); then
	echo "# $FAILS check(s) FAILED"
	exit 1
fi
exit 0
