#!/usr/bin/env bash
# proxy_connj_test.sh -- MariaDB Connector/J (Debian's libmariadb-java,
# 2.7) behind a HikariCP pool, as a Java application uses them, through
# dal-proxy and directly on MariaDB, compared line by line:
# tests/suites/ConnJ.java, compiled here into the build tree, prints every
# observation (the driver's and server's names and versions, DOUBLE,
# DECIMAL, DATETIME(6), BIT, BLOB and JSON round trips with their metadata,
# batches, generated keys, update counts with and without
# CLIENT_FOUND_ROWS, a transaction with point and scatter reads, a
# rollback, setCatalog between two databases, a duplicate key) for four
# pools: server-side and client-side prepared statements, each with
# rewriteBatchedStatements off and on, validated by the driver's isValid
# or by SELECT 1.  Through the proxy the table acct is sharded over two
# datasources in 4 physical tables (reads of all of them merged), the
# database hr is a [schema] on the second server; directly both are plain
# databases of one server.  dal's own refusals, which have no server
# counterpart, are checked through the proxy alone.  Starts its own
# MariaDB servers; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

jars=(/usr/share/java/mariadb-java-client.jar /usr/share/java/HikariCP.jar
      /usr/share/java/slf4j-api.jar /usr/share/java/slf4j-nop.jar)
for j in "${jars[@]}"; do
    [ -f "$j" ] || { echo "FAIL: $j missing (tests/harness/deps.sh installs libmariadb-java libhikaricp-java libslf4j-java)" >&2; exit 1; }
done
if ! command -v javac >/dev/null || ! command -v java >/dev/null; then
    echo "FAIL: java or javac missing (tests/harness/deps.sh installs default-jdk-headless)" >&2
    exit 1
fi
cp=$(IFS=:; echo "${jars[*]}")
classes=$builddir/tests/connj
mkdir -p "$classes"
javac -nowarn -d "$classes" -cp "$cp" "$srcdir/tests/suites/ConnJ.java" 2>"$work/javac.err" ||
    { echo "FAIL: javac ConnJ.java: $(cat "$work/javac.err")" >&2; exit 1; }
# connj ARGS...: the program.  An LD_PRELOAD of the caller's is left out:
# a sanitizer runtime preloaded for dal's own programs (as lookup_test.sh
# does for libdal) is not for the JVM, which is not built with it
connj() {
    env -u LD_PRELOAD java -cp "$classes:$cp" ConnJ "$@"
}

px_cluster 2 --db 'shard_%d' --db shop --db hr
port=$("$harness/cluster.sh" free-port)
export PX_TEST_PASSWORD='connj-s3cret'
{
    px_ini_sharded
    printf '[datasource hrds]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/hr\n' "${ports[1]}"
    printf '[schema hr]\ndefault_datasource = hrds\n'
    px_ini_table acct 4 id mod
    px_ini_proxy "$port" shop
} >"$work/px.ini"
px_start "$work/px.ini" "$port"

# the tables: through the proxy (acct on every physical table, log on the
# default datasource), directly in shop of the first server; staff in hr of
# the server each serves hr from
ddl="CREATE TABLE acct (id INT PRIMARY KEY, owner VARCHAR(40), bal DECIMAL(14,2),
                        ratio DOUBLE, ts DATETIME(6), flags BIT(8), data BLOB, doc JSON);
     CREATE TABLE log (id INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(20));"
staff="CREATE TABLE staff (name VARCHAR(20) PRIMARY KEY, dept VARCHAR(20));
       INSERT INTO staff VALUES ('ann', 'ops'), ('bob', 'dev');"
mariadb -h127.0.0.1 -P"$port" -uapp -p"$PX_TEST_PASSWORD" shop -e "$ddl"
mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass shop -e "$ddl"
mariadb -h127.0.0.1 -P"${ports[0]}" -udal -pdalpass hr -e "$staff"
mariadb -h127.0.0.1 -P"${ports[1]}" -udal -pdalpass hr -e "$staff"

connj "${ports[0]}" dal dalpass >"$work/direct.out" 2>"$work/direct.err" ||
    fail "Connector/J directly: $(tail -20 "$work/direct.err")"
connj "$port" app "$PX_TEST_PASSWORD" proxy >"$work/proxy.out" 2>"$work/proxy.err" ||
    fail "Connector/J through the proxy: $(tail -20 "$work/proxy.err")"
# the lines of dal's refusals ("POOL proxy: ...") are judged below, not
# compared: the server runs those statements
grep -v '^[^ ]* proxy: ' "$work/proxy.out" >"$work/proxy_compared.out" || true
diff -u "$work/direct.out" "$work/proxy_compared.out" >"$work/diff" ||
    fail "Connector/J: the proxy and the server differ: $(head -80 "$work/diff")"

# what must be there, so that an empty or short run cannot pass the diff
for line in 'product: MariaDB' 'driver: MariaDB Connector/J 2.7' 'validated and kept its connection: true' \
        'duplicate: java.sql.SQLIntegrityConstraintViolationException state=23000 code=1062' \
        'catalog after setCatalog: hr' 'after rollback row 1: 0 (Long)'; do
    [ "$(cut -d' ' -f2- "$work/proxy.out" | awk -v l="$line" 'index($0, l) == 1' | wc -l)" = 4 ] ||
        fail "not in each pool's output through the proxy: '$line': $(grep -F "${line%%:*}" "$work/proxy.out" | head -8)"
done
# dal's refusals: the server's class of error for their SQLSTATE, never
# SQLTransientConnectionException (which a pool or an application retries)
grep ' proxy: ' "$work/proxy.out" >"$work/refusals.out" || true
[ "$(grep -c ' proxy: .*state=' "$work/refusals.out")" = 28 ] ||
    fail "dal's refusals: $(cat "$work/refusals.out")"
! grep -E 'accepted|Transient' "$work/refusals.out" ||
    fail "a refusal of dal accepted or transient: $(grep -E 'accepted|Transient' "$work/refusals.out")"

# the proxy stops cleanly after the pools' connections (no sanitizer report)
px_stop "${pids[0]}" "$work/px.log"
px_finish "Connector/J and HikariCP through dal-proxy"
