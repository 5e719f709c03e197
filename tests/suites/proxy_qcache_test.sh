#!/usr/bin/env bash
# proxy_qcache_test.sh -- the server's query cache serves a client's
# SELECTs through dal-proxy as it serves them directly: the same statements
# (PyMySQL, InnoDB and MyISAM tables, a transaction, autocommit on) move
# the server's Qcache_inserts, Qcache_hits, Qcache_queries_in_cache and
# Qcache_not_cached by the same amounts either way.  A server whose
# session tracks transaction information neither stores nor serves cached
# results, so dal's backend connections must not turn that tracking on;
# BEGIN after a ROLLBACK with a warning (1196) must not report it again.
# With autocommit 0 the counters may differ (docs/proxy.md says why): the
# rows and warnings are compared, and the cache must serve through the
# proxy.  Starts its own MariaDB server; never skips.
set -euo pipefail
# shellcheck source=tests/harness/proxy_lib.sh
. "$(dirname "$0")/../harness/proxy_lib.sh"

px_cluster 1 --db test
root() { mariadb -h127.0.0.1 -P"${ports[0]}" -uroot "$@"; }
# on before the proxy connects: a session takes query_cache_type from the
# global when it starts (and when it is reset)
root -e 'SET GLOBAL query_cache_size = 4194304, GLOBAL query_cache_type = 1'
# root with the server's empty password, through the server's own accounts
px_passthrough test
px_start "$work/px.ini" "$port"
root test -e "CREATE TABLE qi (a INT PRIMARY KEY, b VARCHAR(10)) ENGINE=InnoDB;
    CREATE TABLE qm (a INT PRIMARY KEY, b VARCHAR(10)) ENGINE=MyISAM;
    INSERT INTO qi VALUES (1, 'one'), (2, 'two'); INSERT INTO qm VALUES (1, 'one'), (2, 'two')"

out=$(PX_PORT=$port PLAIN_PORT=${ports[0]} /usr/bin/python3 - <<'PY' 2>&1
import os, pymysql
def conn(port, ac):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           database="test", autocommit=ac)
status = conn(int(os.environ["PLAIN_PORT"]), True)
def counters():
    cur = status.cursor()
    cur.execute("SHOW GLOBAL STATUS LIKE 'Qcache%'")
    return {k: int(v) for k, v in cur.fetchall()}
def run(port, ac):
    """the counters' moves, and the rows and warnings, of one client's statements"""
    status.cursor().execute("RESET QUERY CACHE")
    c = conn(port, ac)
    cur, seen = c.cursor(), []
    before = counters()
    for sql in ("SELECT b FROM qi WHERE a = 1", "SELECT b FROM qi WHERE a = 1",
                "SELECT b FROM qm ORDER BY a", "SELECT b FROM qm ORDER BY a",
                "BEGIN", "SELECT b FROM qi WHERE a = 2", "SELECT b FROM qi WHERE a = 2",
                "COMMIT", "SELECT b FROM qi WHERE a = 2", "SELECT b FROM qi WHERE a = 1",
                "SELECT SQL_NO_CACHE b FROM qi WHERE a = 1",
                # a write to a table drops its cached results
                "UPDATE qm SET b = 'uno' WHERE a = 1", "SELECT b FROM qm ORDER BY a",
                "UPDATE qm SET b = 'one' WHERE a = 1",
                # a MyISAM write a ROLLBACK cannot undo (1196), then BEGIN
                "BEGIN", "UPDATE qm SET b = 'one' WHERE a = 2", "UPDATE qi SET b = 'two' WHERE a = 2",
                "ROLLBACK", "BEGIN", "SELECT b FROM qi WHERE a = 1", "COMMIT",
                "UPDATE qm SET b = 'two' WHERE a = 2", "COMMIT"):
        cur.execute(sql)
        seen.append((sql, cur.fetchall(), cur._result.warning_count))
    c.commit()
    after = counters()
    c.close()
    moved = {k: after[k] - before[k] for k in
             ("Qcache_inserts", "Qcache_hits", "Qcache_queries_in_cache", "Qcache_not_cached")}
    return moved, seen
for ac in (True, False):
    direct = run(int(os.environ["PLAIN_PORT"]), ac)
    proxied = run(int(os.environ["PX_PORT"]), ac)
    if direct[0]["Qcache_hits"] == 0 or direct[0]["Qcache_inserts"] == 0:
        print("autocommit %s: the server cached nothing directly: %r" % (ac, direct[0]))
    # with autocommit 0 a transaction begins differently: the server's
    # implicit one at a client's first statement, dal's BEGIN on a
    # connection with autocommit 1 (docs/proxy.md): keys and InnoDB's
    # permission differ, the cache still serves
    if not ac and (proxied[0]["Qcache_hits"] == 0 or proxied[0]["Qcache_inserts"] == 0):
        print("autocommit 0: the server cached nothing through the proxy: %r" % (proxied[0],))
    elif ac and direct[0] != proxied[0]:
        print("autocommit %s: query cache counters moved directly %r, through the proxy %r"
              % (ac, direct[0], proxied[0]))
    for d, p in zip(direct[1], proxied[1]):
        if d != p:
            print("autocommit %s: directly %r, through the proxy %r" % (ac, d, p))
PY
) || fail "query cache differential: $out"
[ -z "$out" ] || fail "the query cache through the proxy: $out"

root -e 'SET GLOBAL query_cache_type = 0, GLOBAL query_cache_size = 1048576'
px_finish proxy_qcache_test
