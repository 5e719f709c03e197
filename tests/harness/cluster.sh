#!/usr/bin/env bash
# cluster.sh - start and stop a throwaway MariaDB cluster for the dal test suite.
#
# Usage: cluster.sh --help
#
# Every instance is a private mariadbd listening on 127.0.0.1 on a free port,
# with its data, socket, logs and pid file under the cluster directory. Nothing
# outside that directory is read or written (no my.cnf is read: --no-defaults /
# --defaults-file everywhere). Works as root and as an ordinary user; needs only
# bash (>= 4.4), coreutils and the MariaDB server and client programs.

set -euo pipefail

PROG=${0##*/}

usage() {
	cat <<'EOF'
Usage:
  cluster.sh start DIR N [--replicas R] [--db NAME]... [--base-port P] [--timeout S]
  cluster.sh stop DIR [--clean]
  cluster.sh kill DIR NAME
  cluster.sh restart DIR NAME
  cluster.sh port DIR NAME
  cluster.sh status DIR
  cluster.sh client DIR NAME [mariadb client arguments...]
  cluster.sh free-port
  cluster.sh --help

start    Create DIR (it must be absent or empty) and start N master instances
         m0 .. m(N-1) and, with --replicas R, R replicas of each master named
         m<i>-r<j>. Prints the master ports on stdout, one per line, and writes:
           DIR/ports           master ports, one per line, in master order
           DIR/replica_ports   lines "MASTER_INDEX REPLICA_INDEX PORT"
           DIR/env             shell-sourceable: DAL_TEST_PORTS="p0 p1 ...",
                               DAL_TEST_REPLICA_PORTS (ordered m0-r0 m0-r1 ..
                               m1-r0 ..), DAL_TEST_CLUSTER_DIR, DAL_TEST_HOST,
                               DAL_TEST_USER, DAL_TEST_PASSWORD, ...
           DIR/instances       lines "NAME ROLE MASTER_INDEX REPLICA_INDEX"
           DIR/NAME/           my.cnf, port, pid, error.log, data/, tmp/,
                               sock (the unix socket; it is data/sock instead
                               if DIR is too long for a socket path)
         Options:
           --replicas R    R replicas per master (default 0), replicating with
                           MASTER_USE_GTID=slave_pos.
           --db NAME       CREATE DATABASE NAME on every master (repeatable).
                           Every "%d" in NAME is replaced by the master index:
                           --db 'product_%d' creates product_0 on m0, product_1
                           on m1, ... The databases are created after
                           replication is running, and start returns only once
                           every replica has them.
           --base-port P   allocate ports upwards from P (busy ports are
                           skipped) instead of picking random free ports.
           --timeout S     seconds to wait for the instances (default 60, or
                           $DAL_CLUSTER_TIMEOUT).
         On failure start prints the tail of the failing instance's error log,
         stops every instance it started, keeps DIR for inspection, and exits 1.
stop     Stop every instance of the cluster (mariadb-admin shutdown, then
         SIGTERM, then SIGKILL). Exits 0 even if some were already down.
         --clean also deletes DIR.
kill     SIGKILL one instance (NAME: m0, m1-r0, ...), e.g. for failover tests.
restart  Start a stopped or killed instance again, on the same port, and wait
         until it answers. A replica resumes replication by itself.
port     Print the port of instance NAME.
status   One line per instance: "NAME PORT up|down".
client   Run the mariadb client as root against instance NAME over TCP.
free-port
         Print a TCP port nothing uses now, picked below the kernel's
         ephemeral range as the cluster's own ports are (so no outgoing
         connection takes it before it is listened on): for a server a
         test starts next to the cluster, e.g. a metrics endpoint. Every
         port handed out (the cluster's too) is leased for 15 minutes in
         $DAL_PORT_REGISTRY (default /tmp/dal-test-ports), so suites run in
         parallel never get the same one.

Accounts on every instance (all over TCP at 127.0.0.1):
  root   no password   (root@localhost, root@127.0.0.1, root@::1)
  dal    password dalpass, ALL PRIVILEGES WITH GRANT OPTION (dal@%, dal@localhost)
  repl   password replpass, REPLICATION SLAVE (used by the replicas)

Each instance: server_id unique in the cluster, log_bin, binlog_format=ROW,
log_slave_updates, character_set_server=utf8mb4, small memory settings.

Every instance has its own tmpdir (DIR/NAME/tmp): a starting mariadbd
deletes all #sql* files in its tmpdir, which breaks other servers' temporary
tables when several servers share /tmp.

Environment:
  DAL_CLUSTER_TIMEOUT  default for --timeout (60)
  DAL_MARIADBD, DAL_MARIADB, DAL_MARIADB_ADMIN, DAL_MARIADB_INSTALL_DB
                       program paths (default: found in PATH, /usr/sbin, ...)
EOF
}

die() {
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit 1
}
note() {
	printf '%s: %s\n' "$PROG" "$*" >&2
}

# ---------------------------------------------------------------- programs --

# find_prog VAR NAME... : set VAR to $DAL_VAR if set, else to the first NAME
# found in PATH or in the sbin directories (mariadbd lives in /usr/sbin, which
# is often not in an ordinary user's PATH).
find_prog() {
	local var=$1 name dir override=DAL_$1
	shift
	if [[ -n ${!override:-} ]]; then
		[[ -x ${!override} ]] || die "$override=${!override} is not an executable file"
		printf -v "$var" '%s' "${!override}"
		return 0
	fi
	for name in "$@"; do
		if command -v "$name" >/dev/null 2>&1; then
			printf -v "$var" '%s' "$(command -v "$name")"
			return 0
		fi
		for dir in /usr/sbin /usr/local/sbin /sbin /usr/libexec /usr/local/bin /usr/bin; do
			if [[ -x $dir/$name ]]; then
				printf -v "$var" '%s' "$dir/$name"
				return 0
			fi
		done
	done
	die "cannot find $1 (looked for: $*); install mariadb-server and mariadb-client, or set $override"
}

init_progs() {
	find_prog MARIADBD mariadbd mysqld
	find_prog MARIADB mariadb mysql
	find_prog MARIADB_ADMIN mariadb-admin mysqladmin
}

# ----------------------------------------------------------------- helpers --

now_ms() {
	local t=${EPOCHREALTIME:-}
	if [[ -n $t ]]; then
		t=${t/[.,]/}
		echo $((10#$t / 1000))
	else
		echo $(($(date +%s%N) / 1000000))
	fi
}

is_uint() {
	[[ $1 =~ ^[0-9]+$ ]]
}

# Run SQL as root on the instance listening on PORT. Output: raw, no headers.
sql() {
	local port=$1
	shift
	timeout 60 "$MARIADB" --no-defaults --protocol=TCP -h127.0.0.1 -P"$port" \
		-uroot --connect-timeout=2 -N -B -e "$*"
}

# sql_vertical PORT STATEMENT: like sql, output "Column: value" lines.
sql_vertical() {
	local port=$1
	shift
	timeout 60 "$MARIADB" --no-defaults --protocol=TCP -h127.0.0.1 -P"$port" \
		-uroot --connect-timeout=2 -E -e "$*"
}

# proc_alive PID: the process exists and is not a zombie.
proc_alive() {
	local pid=$1 stat
	if [[ -d /proc/self ]]; then
		stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
		stat=${stat##*) }
		[[ ${stat:0:1} != Z ]]
	else
		kill -0 "$pid" 2>/dev/null
	fi
}

# cmdline_of PID: CMDLINE := the command line of PID, arguments joined by
# spaces (read without forking: this runs for every process in kill_strays).
CMDLINE=
cmdline_of() {
	local -a args=()
	mapfile -d '' -t args 2>/dev/null <"/proc/$1/cmdline" || return 1
	CMDLINE=${args[*]-}
}

# inst_pid NAME: print the pid of instance NAME if it is running. The pid is
# checked against the process's command line so that a recycled pid is never
# mistaken for ours.
inst_pid() {
	local name=$1 pid cmd
	[[ -r $DIR/$name/pid ]] || return 1
	pid=$(<"$DIR/$name/pid")
	is_uint "$pid" || return 1
	proc_alive "$pid" || return 1
	if [[ -r /proc/$pid/cmdline ]]; then
		cmdline_of "$pid" || return 1
		cmd=$CMDLINE
		[[ $cmd == *"--defaults-file=$DIR/$name/my.cnf"* ]] || return 1
	fi
	echo "$pid"
}

# wait_gone PID SECONDS: wait until PID has exited; 1 on timeout.
wait_gone() {
	local pid=$1 end=$(($(now_ms) + $2 * 1000))
	while proc_alive "$pid"; do
		if (($(now_ms) > end)); then
			return 1
		fi
		sleep 0.05
	done
	return 0
}

# port_busy PORT: something on this machine uses the TCP port (listening,
# bound or connected), according to /proc/net/tcp{,6} or a connect probe.
port_busy() {
	local port=$1
	if [[ -n ${USED_PORTS[$port]:-} ]]; then
		return 0
	fi
	if (: <"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		return 0
	fi
	return 1
}

# Load the ports in use from /proc/net/tcp{,6} into USED_PORTS.
declare -A USED_PORTS=()
load_used_ports() {
	local lines local_addr
	USED_PORTS=()
	# Read the files in one go: bash reads them a byte at a time otherwise,
	# and every read of a /proc/net file is expensive.
	lines=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null) || true
	while read -r _ local_addr _; do
		if [[ $local_addr =~ ^[0-9A-Fa-f]+:([0-9A-Fa-f]{4})$ ]]; then
			USED_PORTS[$((16#${BASH_REMATCH[1]}))]=1
		fi
	done <<<"$lines"
}

# The range random ports are picked from: below (or else above) the kernel's
# ephemeral range, so outgoing connections never take a cluster's port.
PORT_LO=10000
PORT_HI=32767
port_range() {
	local lo=32768 hi=60999
	if [[ -r /proc/sys/net/ipv4/ip_local_port_range ]]; then
		read -r lo hi </proc/sys/net/ipv4/ip_local_port_range || true
	fi
	if ((lo - 1 - 10000 >= 2000)); then
		PORT_LO=10000 PORT_HI=$((lo - 1))
	elif ((65000 - hi - 1 >= 2000)); then
		PORT_LO=$((hi + 1)) PORT_HI=65000
	else
		PORT_LO=10000 PORT_HI=65000
	fi
}

# A port handed out is leased for PORT_LEASE_MIN minutes in PORT_REGISTRY (a
# directory a port, made atomically by mkdir), so that no other run of this
# script -- another suite's in parallel, or the same suite's next call --
# hands it out again before its taker listens on it. Without a writable
# registry, ports are picked as if none were leased.
PORT_REGISTRY=${DAL_PORT_REGISTRY:-/tmp/dal-test-ports}
PORT_LEASE_MIN=15

# lease_port PORT: true if PORT was not leased (or its lease ran out) and is
# now leased to the caller
lease_port() {
	local d=$PORT_REGISTRY/$1
	[[ -d $PORT_REGISTRY ]] || mkdir -p "$PORT_REGISTRY" 2>/dev/null || true
	[[ -w $PORT_REGISTRY ]] || return 0
	mkdir "$d" 2>/dev/null && return 0
	[[ -n $(find "$d" -maxdepth 0 -mmin +"$PORT_LEASE_MIN" 2>/dev/null) ]] || return 1
	rmdir "$d" 2>/dev/null
	mkdir "$d" 2>/dev/null
}

# pick_port [fresh]: set PICKED_PORT to a free port not handed out before by
# this process nor leased by another. The list of used ports is read once,
# or again with "fresh".
declare -A TAKEN_PORTS=()
NEXT_BASE_PORT=
USED_PORTS_LOADED=0
pick_port() {
	local p tries=0 r
	if ((!USED_PORTS_LOADED)) || [[ ${1:-} == fresh ]]; then
		load_used_ports
		USED_PORTS_LOADED=1
	fi
	if [[ -n $NEXT_BASE_PORT ]]; then
		p=$NEXT_BASE_PORT
		while ((p <= 65535)); do
			if [[ -z ${TAKEN_PORTS[$p]:-} ]] && ! port_busy "$p"; then
				TAKEN_PORTS[$p]=1
				NEXT_BASE_PORT=$((p + 1))
				PICKED_PORT=$p
				return 0
			fi
			p=$((p + 1))
		done
		die "no free port at or above --base-port"
	fi
	while ((tries < 500)); do
		tries=$((tries + 1))
		r=${SRANDOM:-$((RANDOM << 15 | RANDOM))}
		p=$((PORT_LO + r % (PORT_HI - PORT_LO + 1)))
		if [[ -z ${TAKEN_PORTS[$p]:-} ]] && ! port_busy "$p" && lease_port "$p"; then
			TAKEN_PORTS[$p]=1
			PICKED_PORT=$p
			return 0
		fi
	done
	die "could not find a free TCP port in $PORT_LO-$PORT_HI"
}

# ------------------------------------------------------------- cluster dir --

# set_dir PATH: DIR := absolute, symlink-free path of an existing cluster.
set_dir() {
	[[ -n $1 ]] || die "missing cluster directory"
	[[ -d $1 ]] || die "$1: no such directory"
	DIR=$(cd "$1" && pwd -P)
}

require_cluster() {
	[[ -f $DIR/.dal-cluster && -f $DIR/instances ]] ||
		die "$DIR is not a cluster directory made by $PROG start"
}

# instance_names: all instance names, masters first.
instance_names() {
	local name rest
	while read -r name rest; do
		if [[ -n $name ]]; then
			echo "$name"
		fi
	done <"$DIR/instances"
}

require_instance() {
	local name=$1 n
	[[ -n $name ]] || die "missing instance name"
	for n in $(instance_names); do
		if [[ $n == "$name" ]]; then
			return 0
		fi
	done
	n=$(instance_names)
	die "no instance '$name' in $DIR (instances: ${n//$'\n'/ })"
}

inst_port() {
	cat "$DIR/$1/port"
}

# write_cnf NAME PORT SERVER_ID
write_cnf() {
	local name=$1 port=$2 id=$3 d=$DIR/$1 sock user_line=
	# Unix socket paths are limited to 107 bytes. If the absolute path is too
	# long, give mariadbd a relative one: it resolves it inside its datadir.
	sock=$d/sock
	if ((${#sock} > 100)); then
		sock=sock
	fi
	if ((EUID == 0)); then
		user_line="user=root"
	fi
	cat >"$d/my.cnf" <<EOF
# written by $PROG; instance $name of cluster $DIR
[mariadbd]
$user_line
datadir=$d/data
port=$port
bind-address=127.0.0.1
socket=$sock
pid-file=$d/mariadbd.pid
log-error=$d/error.log
# A private tmpdir: a starting mariadbd deletes every #sql* file in its
# tmpdir, i.e. the temporary tables of other servers sharing /tmp.
tmpdir=$d/tmp
skip-name-resolve
server-id=$id
log-bin=binlog
relay-log=relay-bin
log-slave-updates
binlog-format=ROW
sync-binlog=0
relay-log-recovery=1
slave-net-timeout=10
character-set-server=utf8mb4
collation-server=utf8mb4_general_ci
max-connections=300
table-open-cache=400
table-definition-cache=400
open-files-limit=4000
performance-schema=OFF
loose-feedback=OFF
key-buffer-size=64K
aria-pagecache-buffer-size=1M
innodb-buffer-pool-size=16M
innodb-log-file-size=4M
innodb-log-buffer-size=2M
innodb-use-native-aio=0
innodb-temp-data-file-path=ibtmp1:4M:autoextend
innodb-doublewrite=0
innodb-flush-log-at-trx-commit=2
EOF
	mkdir -p "$d/tmp"
	echo "$port" >"$d/port"
}

# set_cnf_port NAME PORT: move instance NAME to another port.
set_cnf_port() {
	local name=$1 port=$2 line out=""
	while IFS= read -r line; do
		if [[ $line == port=* ]]; then
			line=port=$port
		fi
		out+=$line$'\n'
	done <"$DIR/$name/my.cnf"
	printf '%s' "$out" >"$DIR/$name/my.cnf"
	echo "$port" >"$DIR/$name/port"
}

# launch NAME: start mariadbd for NAME in the background; pid -> DIR/NAME/pid.
declare -A LOG_OFFSET=()
launch() {
	local name=$1 d=$DIR/$1 fd
	rm -f "$d/mariadbd.pid"
	LOG_OFFSET[$name]=0
	if [[ -f $d/error.log ]]; then
		LOG_OFFSET[$name]=$(stat -c %s "$d/error.log")
	fi
	(
		trap - EXIT INT TERM
		trap '' HUP
		exec </dev/null >>"$d/stdout.log" 2>&1
		# Do not leak our caller's descriptors (pipes of a test driver,
		# command substitution, make's jobserver) into the daemon.
		if [[ -d /proc/self/fd ]]; then
			for fd in /proc/self/fd/*; do
				fd=${fd##*/}
				if ((fd > 2)); then
					eval "exec $fd>&-" 2>/dev/null || true
				fi
			done
		fi
		exec "$MARIADBD" --defaults-file="$d/my.cnf"
	) &
	LAUNCHED[$name]=$!
	echo $! >"$d/pid"
	disown $! 2>/dev/null || true
}
declare -A LAUNCHED=()

# answers NAME: our server for NAME answers queries on its port. (Checking the
# datadir makes sure that it is not some other server on a reused port.)
answers() {
	local d=$DIR/$1 out
	out=$(sql "$(inst_port "$1")" 'SELECT @@datadir' 2>/dev/null) || return 1
	[[ ${out%/} == "$d/data" ]]
}

# bind_failed NAME: the error log written since NAME was last launched says
# that the port was in use.
bind_failed() {
	local log
	log=$(tail -c +"$((${LOG_OFFSET[$1]:-0} + 1))" "$DIR/$1/error.log" 2>/dev/null) || return 1
	[[ $log == *"Address already in use"* || $log == *"Bind on TCP/IP port"* ]]
}

# field NAME TEXT: the value of "NAME: value" in vertical (-E) client output.
field() {
	local line
	while IFS= read -r line; do
		line=${line#"${line%%[! ]*}"}
		if [[ $line == "$1: "* ]]; then
			echo "${line#"$1: "}"
			return 0
		fi
	done <<<"$2"
}

show_log() {
	local name=$1 f shown=0
	for f in "$DIR/$name/error.log" "$DIR/$name/stdout.log"; do
		if [[ -s $f ]]; then
			printf '%s: ---- last lines of %s ----\n' "$PROG" "$f" >&2
			tail -n 25 "$f" >&2
			shown=1
		fi
	done
	if ((shown)); then
		printf '%s: ----\n' "$PROG" >&2
	else
		note "$name: its error log ($DIR/$name/error.log) is empty"
	fi
}

# wait_up REPICK NAME...: wait until every NAME answers (deadline: $DEADLINE).
# With REPICK=1, an instance that died because its port was taken in the
# meantime (another cluster, another program) is moved to a new port.
FAILED=
wait_up() {
	local repick=$1 n port pid
	shift
	local -A pending=() retries=()
	for n in "$@"; do
		pending[$n]=1
		retries[$n]=0
	done
	while ((${#pending[@]} > 0)); do
		for n in "${!pending[@]}"; do
			if answers "$n"; then
				unset "pending[$n]"
				continue
			fi
			pid=$(<"$DIR/$n/pid")
			if proc_alive "$pid"; then
				continue
			fi
			if ((repick)) && bind_failed "$n" && ((${retries[$n]} < 8)); then
				retries[$n]=$((${retries[$n]} + 1))
				mv -f "$DIR/$n/error.log" "$DIR/$n/error.log.bind-failed.${retries[$n]}"
				port=$(inst_port "$n")
				pick_port fresh
				note "$n: port $port was taken, retrying on port $PICKED_PORT"
				set_cnf_port "$n" "$PICKED_PORT"
				launch "$n"
				continue
			fi
			FAILED=$n
			if bind_failed "$n"; then
				note "$n: mariadbd could not listen on port $(inst_port "$n") (port in use)"
			else
				note "$n: mariadbd exited during startup"
			fi
			return 1
		done
		if (($(now_ms) > DEADLINE)); then
			FAILED=$(printf '%s\n' "${!pending[@]}" | sort | head -n 1)
			note "timed out after ${TIMEOUT}s waiting for: $(printf '%s\n' "${!pending[@]}" | sort | tr '\n' ' ')"
			return 1
		fi
		sleep 0.1
	done
	return 0
}

# stop_one NAME: clean shutdown, then SIGTERM, then SIGKILL. Always returns 0.
stop_one() {
	local name=$1 pid port
	pid=$(inst_pid "$name") || return 0
	port=$(inst_port "$name" 2>/dev/null) || port=""
	if [[ -n $port ]] &&
		timeout 10 "$MARIADB_ADMIN" --no-defaults --protocol=TCP -h127.0.0.1 -P"$port" \
			-uroot --connect-timeout=2 shutdown >/dev/null 2>&1; then
		if wait_gone "$pid" 30; then
			return 0
		fi
		note "$name (pid $pid) did not shut down, sending SIGTERM"
	fi
	# SIGTERM is a clean shutdown too, for a server that did not take the
	# shutdown command (still starting, or not answering).
	kill -TERM "$pid" 2>/dev/null || true
	if wait_gone "$pid" 30; then
		return 0
	fi
	note "$name (pid $pid) did not exit, sending SIGKILL"
	kill -KILL "$pid" 2>/dev/null || true
	wait_gone "$pid" 10 || note "$name (pid $pid) is still running"
	return 0
}

# ------------------------------------------------------------------- start --

# kill_strays: SIGKILL any mariadbd started with a my.cnf of this cluster.
kill_strays() {
	local p cmd
	[[ -d /proc/self ]] || return 0
	for p in /proc/[0-9]*; do
		cmdline_of "${p#/proc/}" || continue
		cmd=$CMDLINE
		if [[ $cmd == *"--defaults-file=$DIR/"*"/my.cnf"* ]]; then
			kill -KILL "${p#/proc/}" 2>/dev/null || true
			wait_gone "${p#/proc/}" 10 || true
		fi
	done
}

START_OK=0
start_cleanup() {
	local rc=$? n pid
	if ((START_OK)); then
		return
	fi
	((rc != 0)) || rc=1
	trap - EXIT INT TERM
	if [[ -n $FAILED ]]; then
		show_log "$FAILED"
	fi
	for n in "${!LAUNCHED[@]}"; do
		pid=${LAUNCHED[$n]}
		kill -KILL "$pid" 2>/dev/null || true
	done
	for n in "${!LAUNCHED[@]}"; do
		wait_gone "${LAUNCHED[$n]}" 10 || note "could not kill $n (pid ${LAUNCHED[$n]})"
	done
	# A signal can arrive between forking an instance and recording its pid.
	kill_strays
	sleep 0.2
	kill_strays
	rm -rf "$DIR/.template" "$DIR/.template.sql" "$DIR/.tmp"
	note "start failed; all instances stopped; logs kept in $DIR"
	exit "$rc"
}

cmd_start() {
	local dir="" n_masters="" replicas=0 base_port="" arg
	local -a dbs=() pos=()
	TIMEOUT=${DAL_CLUSTER_TIMEOUT:-60}
	while (($#)); do
		arg=$1
		shift
		case $arg in
		--replicas | --db | --base-port | --timeout)
			(($#)) || die "$arg needs a value"
			set -- "$arg=$1" "${@:2}"
			continue
			;;
		--replicas=*) replicas=${arg#*=} ;;
		--db=*) dbs+=("${arg#*=}") ;;
		--base-port=*) base_port=${arg#*=} ;;
		--timeout=*) TIMEOUT=${arg#*=} ;;
		-h | --help)
			usage
			exit 0
			;;
		-*) die "start: unknown option $arg (see --help)" ;;
		*) pos+=("$arg") ;;
		esac
	done
	((${#pos[@]} == 2)) || die "usage: $PROG start DIR N [--replicas R] [--db NAME]... [--base-port P]"
	dir=${pos[0]}
	n_masters=${pos[1]}
	if ! is_uint "$n_masters" || ((10#$n_masters < 1 || 10#$n_masters > 99)); then
		die "N must be a number from 1 to 99, not '$n_masters'"
	fi
	if ! is_uint "$replicas" || ((10#$replicas > 99)); then
		die "--replicas must be a number from 0 to 99, not '$replicas'"
	fi
	n_masters=$((10#$n_masters))
	replicas=$((10#$replicas))
	if [[ -n $base_port ]]; then
		if ! is_uint "$base_port" || ((10#$base_port < 1024 || 10#$base_port > 65535)); then
			die "--base-port must be a port number from 1024 to 65535, not '$base_port'"
		fi
		NEXT_BASE_PORT=$((10#$base_port))
	fi
	if ! is_uint "$TIMEOUT" || ((10#$TIMEOUT == 0)); then
		die "--timeout must be a positive number of seconds, not '$TIMEOUT'"
	fi
	TIMEOUT=$((10#$TIMEOUT))
	for arg in "${dbs[@]}"; do
		[[ -n $arg && ${#arg} -le 60 && $arg != *[\`/\\.]* ]] ||
			die "--db: invalid database name '$arg'"
	done

	# The directory: absent or empty. Never touch a non-empty one.
	[[ -n $dir ]] || die "missing cluster directory"
	[[ $dir != *[[:space:]\"\'\#\\\$\`]* ]] || die "$dir: the directory path must not contain spaces, quotes, '#', '\$', '\`' or '\\'"
	if [[ -e $dir ]]; then
		[[ -d $dir ]] || die "$dir exists and is not a directory"
		if [[ -n $(ls -A "$dir") ]]; then
			die "$dir is not empty; start needs an absent or empty directory"
		fi
	fi
	init_progs
	find_prog MARIADB_INSTALL_DB mariadb-install-db mysql_install_db
	mkdir -p "$dir" || die "cannot create $dir"
	DIR=$(cd "$dir" && pwd -P)
	[[ -w $DIR ]] || die "$DIR is not writable"

	local t0 t1 i j name names=() masters=() reps=()
	t0=$(now_ms)
	trap start_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM

	echo "dal test cluster: masters=$n_masters replicas=$replicas" >"$DIR/.dal-cluster"
	: >"$DIR/instances"
	for ((i = 0; i < n_masters; i++)); do
		masters+=("m$i")
		echo "m$i master $i -" >>"$DIR/instances"
	done
	for ((i = 0; i < n_masters; i++)); do
		for ((j = 0; j < replicas; j++)); do
			reps+=("m$i-r$j")
			echo "m$i-r$j replica $i $j" >>"$DIR/instances"
		done
	done
	names=("${masters[@]}" ${reps[@]+"${reps[@]}"})

	# One data directory made by mariadb-install-db (accounts included),
	# copied for every instance: much faster than one install per instance.
	cat >"$DIR/.template.sql" <<'EOF'
FLUSH PRIVILEGES;
DELETE FROM mysql.global_priv WHERE Host NOT IN ('localhost', '127.0.0.1', '::1', '%');
DELETE FROM mysql.proxies_priv WHERE Host NOT IN ('localhost', '127.0.0.1', '::1', '%');
FLUSH PRIVILEGES;
CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
CREATE USER IF NOT EXISTS 'root'@'::1';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'::1' WITH GRANT OPTION;
CREATE USER 'dal'@'%' IDENTIFIED BY 'dalpass';
GRANT ALL PRIVILEGES ON *.* TO 'dal'@'%' WITH GRANT OPTION;
CREATE USER 'dal'@'localhost' IDENTIFIED BY 'dalpass';
GRANT ALL PRIVILEGES ON *.* TO 'dal'@'localhost' WITH GRANT OPTION;
CREATE USER 'repl'@'%' IDENTIFIED BY 'replpass';
GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';
-- The sys schema needs performance_schema, which is off; it is 100 files
-- less to copy per instance.
DROP DATABASE IF EXISTS sys;
EOF
	local -a install_args=(--no-defaults --auth-root-authentication-method=normal
		--skip-test-db --skip-name-resolve --datadir="$DIR/.template" --tmpdir="$DIR/.tmp"
		--extra-file="$DIR/.template.sql")
	if ((EUID == 0)); then
		install_args+=(--user=root)
	fi
	install_args+=(--innodb-buffer-pool-size=16M --innodb-log-file-size=4M
		--innodb-use-native-aio=0 --innodb-temp-data-file-path=ibtmp1:4M:autoextend
		--loose-feedback=OFF --performance-schema=OFF)
	mkdir "$DIR/.tmp"
	if ! timeout 120 "$MARIADB_INSTALL_DB" "${install_args[@]}" >"$DIR/install.log" 2>&1; then
		printf '%s: ---- last lines of %s ----\n' "$PROG" "$DIR/install.log" >&2
		tail -n 25 "$DIR/install.log" >&2
		die "mariadb-install-db failed (full log: $DIR/install.log)"
	fi
	rm -rf "$DIR/.template.sql" "$DIR/.tmp"

	# Copy in parallel: creating files is slow on some file systems.
	local -a cps=()
	for name in "${names[@]}"; do
		mkdir "$DIR/$name"
		cp -a "$DIR/.template" "$DIR/$name/data" &
		cps+=($!)
	done
	for i in "${cps[@]}"; do
		wait "$i" || die "could not copy the template data directory (disk full?)"
	done
	rm -rf "$DIR/.template"

	port_range
	local id
	for name in "${names[@]}"; do
		if [[ $name == *-r* ]]; then
			i=${name%-r*}
			i=${i#m}
			j=${name#*-r}
			id=$((10000 + i * 100 + j))
		else
			id=$((1 + ${name#m}))
		fi
		pick_port
		write_cnf "$name" "$PICKED_PORT" "$id"
	done

	DEADLINE=$(($(now_ms) + TIMEOUT * 1000))
	for name in "${names[@]}"; do
		launch "$name"
	done
	wait_up 1 "${names[@]}" || exit 1

	# Replication first, databases afterwards, so that replicas get them.
	local mport rname
	for name in ${reps[@]+"${reps[@]}"}; do
		mport=$(inst_port "${name%-r*}")
		sql "$(inst_port "$name")" "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$mport,
			MASTER_USER='repl', MASTER_PASSWORD='replpass', MASTER_USE_GTID=slave_pos,
			MASTER_CONNECT_RETRY=1; START SLAVE" || {
			FAILED=$name
			die "$name: CHANGE MASTER / START SLAVE failed"
		}
	done
	local db
	for ((i = 0; i < n_masters; i++)); do
		for db in ${dbs[@]+"${dbs[@]}"}; do
			db=${db//%d/$i}
			sql "$(inst_port "m$i")" "CREATE DATABASE \`$db\`" || {
				FAILED=m$i
				die "m$i: CREATE DATABASE $db failed"
			}
		done
	done
	for rname in ${reps[@]+"${reps[@]}"}; do
		wait_replica "$rname" || exit 1
	done

	# Results.
	local ports=() rports=() envf
	for name in "${masters[@]}"; do
		ports+=("$(inst_port "$name")")
	done
	printf '%s\n' "${ports[@]}" >"$DIR/ports"
	: >"$DIR/replica_ports"
	for name in ${reps[@]+"${reps[@]}"}; do
		i=${name%-r*}
		rports+=("$(inst_port "$name")")
		echo "${i#m} ${name#*-r} $(inst_port "$name")" >>"$DIR/replica_ports"
	done
	envf=$DIR/env
	{
		# Plain NAME="value" lines (values never contain quotes, '$' or
		# backslashes), easy to parse from other languages too.
		echo "# written by $PROG start; use it with: . $DIR/env"
		echo "DAL_TEST_CLUSTER_DIR=\"$DIR\""
		echo "DAL_TEST_PORTS=\"${ports[*]}\""
		echo "DAL_TEST_REPLICA_PORTS=\"${rports[*]-}\""
		echo "DAL_TEST_MASTERS=\"$n_masters\""
		echo "DAL_TEST_REPLICAS=\"$replicas\""
		echo 'DAL_TEST_HOST="127.0.0.1"'
		echo 'DAL_TEST_USER="dal"'
		echo 'DAL_TEST_PASSWORD="dalpass"'
		echo 'DAL_TEST_ROOT_USER="root"'
		echo 'DAL_TEST_REPL_USER="repl"'
		echo 'DAL_TEST_REPL_PASSWORD="replpass"'
		echo 'export DAL_TEST_CLUSTER_DIR DAL_TEST_PORTS DAL_TEST_REPLICA_PORTS DAL_TEST_MASTERS'
		echo 'export DAL_TEST_REPLICAS DAL_TEST_HOST DAL_TEST_USER DAL_TEST_PASSWORD'
		echo 'export DAL_TEST_ROOT_USER DAL_TEST_REPL_USER DAL_TEST_REPL_PASSWORD'
	} >"$envf"

	START_OK=1
	trap - EXIT INT TERM
	t1=$(now_ms)
	note "started $n_masters master(s) and $((n_masters * replicas)) replica(s) in $DIR in $(((t1 - t0) / 1000)).$(printf '%03d' $(((t1 - t0) % 1000)))s"
	printf '%s\n' "${ports[@]}"
}

# wait_replica NAME: replication threads running and caught up with the
# master's current binlog position (deadline: $DEADLINE).
wait_replica() {
	local name=$1 master=${1%-r*} rport mport st io sqlr err pos left res
	rport=$(inst_port "$name")
	mport=$(inst_port "$master")
	while :; do
		st=$(sql_vertical "$rport" 'SHOW SLAVE STATUS' 2>/dev/null) || st=""
		io=$(field Slave_IO_Running "$st")
		sqlr=$(field Slave_SQL_Running "$st")
		if [[ $io == Yes && $sqlr == Yes ]]; then
			break
		fi
		if [[ -n $st && $sqlr == No ]]; then
			err=$(field Last_SQL_Error "$st")
			FAILED=$name
			note "$name: replication SQL thread stopped: $err"
			return 1
		fi
		if (($(now_ms) > DEADLINE)); then
			err=$(field Last_IO_Error "$st")
			FAILED=$name
			note "$name: replication did not start (IO thread: ${io:-?}; $err)"
			return 1
		fi
		sleep 0.1
	done
	pos=$(sql "$mport" 'SELECT @@gtid_binlog_pos') || {
		FAILED=$master
		note "$master: cannot read gtid_binlog_pos"
		return 1
	}
	if [[ -n $pos ]]; then
		left=$(((DEADLINE - $(now_ms)) / 1000))
		((left > 0)) || left=1
		res=$(sql "$rport" "SELECT MASTER_GTID_WAIT('$pos', $left)") || res=error
		if [[ $res != 0 ]]; then
			FAILED=$name
			note "$name: did not catch up with $master (GTID $pos) in time"
			return 1
		fi
	fi
	return 0
}

# --------------------------------------------------------- other commands --

cmd_stop() {
	local clean=0 dir="" arg n
	for arg in "$@"; do
		case $arg in
		--clean) clean=1 ;;
		-*) die "stop: unknown option $arg" ;;
		*)
			[[ -z $dir ]] || die "usage: $PROG stop DIR [--clean]"
			dir=$arg
			;;
		esac
	done
	[[ -n $dir ]] || die "usage: $PROG stop DIR [--clean]"
	if [[ ! -d $dir ]]; then
		note "stop: $dir does not exist; nothing to stop"
		return 0
	fi
	DIR=$(cd "$dir" && pwd -P)
	if [[ ! -f $DIR/.dal-cluster ]]; then
		note "stop: $DIR is not a cluster directory; nothing to stop"
		return 0
	fi
	init_progs
	if [[ -f $DIR/instances ]]; then
		# Replicas first (they would only log errors about a lost master).
		local -a pids=()
		for n in $(instance_names); do
			[[ $n == *-r* ]] || continue
			stop_one "$n" &
			pids+=($!)
		done
		if ((${#pids[@]})); then
			wait "${pids[@]}" || true
		fi
		pids=()
		for n in $(instance_names); do
			[[ $n != *-r* ]] || continue
			stop_one "$n" &
			pids+=($!)
		done
		if ((${#pids[@]})); then
			wait "${pids[@]}" || true
		fi
		for n in $(instance_names); do
			if inst_pid "$n" >/dev/null; then
				die "stop: $n is still running; not deleting $DIR"
			fi
		done
	fi
	if ((clean)); then
		rm -rf "$DIR"
	fi
	return 0
}

cmd_kill() {
	(($# == 2)) || die "usage: $PROG kill DIR NAME"
	set_dir "$1"
	require_cluster
	require_instance "$2"
	local pid
	if ! pid=$(inst_pid "$2"); then
		note "kill: $2 is not running"
		return 0
	fi
	kill -KILL "$pid" 2>/dev/null || true
	wait_gone "$pid" 10 || die "kill: $2 (pid $pid) did not die"
}

cmd_restart() {
	(($# == 2)) || die "usage: $PROG restart DIR NAME"
	set_dir "$1"
	require_cluster
	require_instance "$2"
	init_progs
	local name=$2 port
	if inst_pid "$name" >/dev/null; then
		note "restart: $name is already running"
		return 0
	fi
	port=$(inst_port "$name")
	# A port another process listens on may be only passing through (a
	# client's connect probe, a server of another suite still closing):
	# wait for it a while, then name who holds it.
	local tries=0
	while (: <"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
		if ((++tries > 40)); then
			ss -ltnp "sport = :$port" >&2 2>/dev/null || true
			die "restart: port $port of $name is now used by another process"
		fi
		sleep 0.25
	done
	TIMEOUT=${DAL_CLUSTER_TIMEOUT:-60}
	is_uint "$TIMEOUT" || TIMEOUT=60
	DEADLINE=$(($(now_ms) + TIMEOUT * 1000))
	launch "$name"
	if ! wait_up 0 "$name"; then
		show_log "$name"
		kill -KILL "${LAUNCHED[$name]}" 2>/dev/null || true
		wait_gone "${LAUNCHED[$name]}" 10 || true
		die "restart: $name did not come up"
	fi
}

cmd_port() {
	(($# == 2)) || die "usage: $PROG port DIR NAME"
	set_dir "$1"
	require_cluster
	require_instance "$2"
	inst_port "$2"
}

cmd_status() {
	(($# == 1)) || die "usage: $PROG status DIR"
	set_dir "$1"
	require_cluster
	init_progs
	local n state
	for n in $(instance_names); do
		state=down
		if inst_pid "$n" >/dev/null && answers "$n"; then
			state=up
		fi
		printf '%s %s %s\n' "$n" "$(inst_port "$n" 2>/dev/null || echo -)" "$state"
	done
}

cmd_client() {
	(($# >= 2)) || die "usage: $PROG client DIR NAME [mariadb arguments...]"
	set_dir "$1"
	require_cluster
	require_instance "$2"
	init_progs
	local port
	port=$(inst_port "$2")
	shift 2
	exec "$MARIADB" --no-defaults --protocol=TCP -h127.0.0.1 -P"$port" -uroot "$@"
}

cmd_free_port() {
	(($# == 0)) || die "free-port takes no arguments"
	port_range
	pick_port fresh
	echo "$PICKED_PORT"
}

main() {
	(($#)) || {
		usage >&2
		exit 2
	}
	local cmd=$1
	shift
	case $cmd in
	start) cmd_start "$@" ;;
	stop) cmd_stop "$@" ;;
	kill) cmd_kill "$@" ;;
	restart) cmd_restart "$@" ;;
	port) cmd_port "$@" ;;
	status) cmd_status "$@" ;;
	client) cmd_client "$@" ;;
	free-port) cmd_free_port "$@" ;;
	-h | --help | help) usage ;;
	*) die "unknown command '$cmd' (see --help)" ;;
	esac
}

main "$@"
