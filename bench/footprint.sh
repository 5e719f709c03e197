#!/usr/bin/env bash
# footprint.sh -- the memory one statement of `dal load` touches: code cache
# lines per library and function (callgrind + bench/codelines.py), code and
# data lines together (valgrind's lackey) and the 4 KiB pages they lie in
# (each a TLB entry), and how many of the data lines are cold: untouched
# for the 16 statements before (a handle's state, met again only every
# hundred statements or so, comes from memory).
#
#   bench/footprint.sh INI [LOAD OPTIONS...]
#
# INI is a dal configuration whose table `dal load --prepare` has filled;
# LOAD OPTIONS go to `dal load` after the workload (default: none; e.g.
# --direct, --prepared).  Runs point-select, one thread.  Uses $DAL_BIN
# (default: _build/tools/dal) and the plugins next to it; the variables the
# INI names (e.g. DAL_BENCH_PASSWORD) must be set.  Needs valgrind, python3.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
bench_dal
build=$(dirname "$(dirname "$DAL_BIN")")
[ $# -ge 1 ] || bench_usage 2
ini=$1
shift
work=$(mktemp -d "${TMPDIR:-/tmp}/dalfp.XXXXXX")
trap 'rm -rf "$work"' EXIT
n=10000

"$build/libtool" --mode=execute valgrind --tool=callgrind --dump-instr=yes \
    --callgrind-out-file="$work/cg.out" "$DAL_BIN" -c "$ini" load -- point-select \
    --threads 1 --statements "$n" --warmup 0 "$@" >/dev/null 2>"$work/cg.log"
python3 "$src/bench/codelines.py" --top 15 "$work/cg.out" "$n"

# lackey prints every instruction and data access; a statement starts at
# each entry into mysql_real_query or mysql_stmt_execute (dal and --direct
# call one of them once per point select, by text or server-prepared).  The median over the statements after the first 100.
mkfifo "$work/trace"
cat >"$work/one.py" <<'PY'
import sys

pid = sys.argv[1]
entry = None     # the entry addresses, once the connector is mapped
n, code, data, seen = 0, set(), set(), []
PAGE = 12        # log2 of the page size: pages per statement from the same lines
last = {}        # data line -> the statement that last touched it
COLD = 16        # a line untouched for this many statements is cold

def find_entry():
    """Addresses of the two statement entries in the traced process."""
    import subprocess
    try:
        maps = open("/proc/%s/maps" % pid).read().splitlines()
    except OSError:
        return None
    for line in maps:
        f = line.split()
        if len(f) > 5 and "libmariadb" in f[5] and int(f[2], 16) == 0:
            out = subprocess.run(["nm", "-D", "--defined-only", f[5]], capture_output=True,
                                 text=True).stdout
            base = int(f[0].split("-")[0], 16)
            return {base + int(s[0], 16) for s in map(str.split, out.splitlines())
                    if len(s) == 3 and s[2].split("@")[0] in ("mysql_real_query",
                                                              "mysql_stmt_execute")}
    return None

for line in sys.stdin:
    if line[0] == "I":
        a = int(line[3:line.index(",")], 16)
        if entry is None:
            entry = find_entry()
        if entry and a in entry:
            if n > 101:      # past connecting and the first executions
                cold = sum(1 for d in data if d in last and n - last[d] > COLD)
                seen.append((len(code), len(data), cold, len({a >> (PAGE - 6) for a in code}),
                             len({d >> (PAGE - 6) for d in data})))
            for d in data:
                last[d] = n
            n += 1
            code, data = set(), set()
        code.add(a >> 6)
    elif line[:2] in (" L", " S", " M"):
        data.add(int(line[3:line.index(",")], 16) >> 6)
if len(seen) < 100:
    sys.exit("footprint.sh: %d statements traced (entry %s), too few" % (n, entry and sorted(map(hex, entry))))
med = lambda v: sorted(v)[len(v) // 2]
print("a statement touches %d code lines and %d data lines (lackey, median of %d),"
      % (med([s[0] for s in seen]), med([s[1] for s in seen]), len(seen)))
print("in %d code pages and %d data pages of 4 KiB;" % (med([s[3] for s in seen]),
                                                        med([s[4] for s in seen])))
print("%.1f of the data lines, on average, were untouched for the %d statements before" %
      (sum(s[2] for s in seen) / len(seen), COLD))
PY
"$build/libtool" --mode=execute valgrind --tool=lackey --trace-mem=yes \
    --log-file="$work/trace" "$DAL_BIN" -c "$ini" load -- point-select --threads 1 \
    --statements 1500 --warmup 0 "$@" >/dev/null 2>&1 &
pid=$!
python3 "$work/one.py" "$pid" <"$work/trace"
wait "$pid"
