#!/usr/bin/python3
"""mysqltest_explain.py DIR

Reads the outputs that `DAL_MT_OUT=DIR tests/suites/mysqltest_proxy.sh` kept of
the tests that failed through dal-proxy (DIR/NAME.text, DIR/NAME.ps) and
prints one line per test for docs/proxy.md's list of exceptions:
"- `NAME` (text|ps|both): reason".  The reason is read off mysqltest's
output by the rules below (the error of the statement that failed, or
what the result lost); a line it cannot explain says what differs first.
Review the lines before they go into the docs.
"""
import os
import re
import sys


def head(sql, n=60):
    sql = " ".join(sql.split())
    return sql if len(sql) <= n else sql[:n] + "..."


SUITE = os.environ.get("DAL_MYSQLTEST_DIR", "/usr/share/mysql/mysql-test")


def reason(name, out):
    """Why one mysqltest run of main/NAME.test failed, from its output."""
    try:
        test = open(os.path.join(SUITE, "main", name + ".test"), errors="replace").read()
    except OSError:
        test = ""
    if "using password: NO" in out:
        return "connects with an empty password (`connect ...,root,,`); dal-proxy's users all have one"
    m = re.search(r"query '(.*?)' failed with wrong errno \w+ \((\d+)\): '(.*?)', instead of (\w+)", out, re.S)
    if m:
        return "`%s` gets error %s (%s) instead of the server's %s" % (head(m[1]), m[2], head(m[3], 70), m[4])
    m = re.search(r"query '(.*?)' failed: (\w+) \((\d+)\): (.*)", out, re.S)
    if m:
        sql, code, msg = m[1], m[3], m[4].splitlines()[0]
        if "DDL inside a transaction" in msg:
            return "DDL inside a transaction, which dal refuses (1235)"
        if "XAER" in m[2]:
            return "XA transactions: each XA statement may run on another pooled connection"
        if code == "1243":
            return ("SQL `PREPARE`/`EXECUTE`: the statement is prepared on one pooled connection "
                    "and executed on another (1243)")
        if code in ("1146", "1051") and re.search(r"TEMPORARY", test, re.I):
            return "a temporary table used by a later statement, which runs on another pooled connection"
        if code == "1064" and "several statements" in msg:
            return "`%s`: a compound statement or several in one call, which dal takes one at a time" % head(sql, 30)
        if code == "1232" and "@" in sql:
            return "user variables: a later statement runs on another pooled connection and sees NULL"
        if code == "1049":
            return "uses another schema than the proxy's one (1049)"
        if code in ("1064", "1235") and ("cannot analyse" in msg or "dal" in msg):
            return "dal refuses `%s`: %s" % (head(sql, 40), head(msg, 90))
        if "NULL" in msg and "@" in sql:
            return "user variables: a later statement runs on another pooled connection and sees NULL"
        return "`%s` fails: %s (%s)" % (head(sql, 50), head(msg, 80), code)
    if "timed out" in out or out.strip() == "":
        return "does not finish within the time limit (a lock held by another pooled connection)"
    diff = [l for l in out.splitlines() if re.match(r"^[-+](?![-+])", l)]
    minus = [l[1:] for l in diff if l.startswith("-")]
    plus = [l[1:] for l in diff if l.startswith("+")]
    if minus and not plus and all(re.match(r"(Warning|Note|Error)\t", l) for l in minus):
        return "SHOW WARNINGS runs on another pooled connection than the statement: its warnings are lost"
    if any(l.startswith("info: ") for l in minus):
        return "the OK packet's info text (mysql_info: Records, Duplicates, Warnings) is not passed on"
    if any(re.match(r"(Created_tmp|Handler_|Com_|Select_|Sort_|Last_query_cost)", l) for l in minus):
        return "session status counters are another pooled connection's"
    if plus and all(l in ("NULL", "") or l.startswith("NULL") for l in plus):
        return ("a value is NULL through the proxy where the server gave one (session state of "
                "another pooled connection; not analysed further)")
    first = "first difference: -`%s` +`%s`" % (head(minus[0], 50) if minus else "",
                                                 head(plus[0], 50) if plus else "")
    return "result differs (not analysed); " + first


def main():
    d = sys.argv[1]
    runs = {}
    for f in sorted(os.listdir(d)):
        name, mode = f.rsplit(".", 1)
        if name:
            runs.setdefault(name, {})[mode] = reason(name, open(os.path.join(d, f), errors="replace").read())
    for name, r in sorted(runs.items()):
        if r.get("text") and r.get("ps"):
            if r["text"] == r["ps"]:
                print("- `%s` (both): %s" % (name, r["text"]))
            else:
                print("- `%s` (both): %s; with --ps-protocol: %s" % (name, r["text"], r["ps"]))
        else:
            mode = "text" if "text" in r else "ps"
            print("- `%s` (%s): %s" % (name, mode, r[mode]))


main()
