#!/usr/bin/env python3
"""codelines.py -- the code footprint of one statement: how many distinct
64-byte instruction cache lines a program runs per statement, per library
and per function, from a callgrind profile made with --dump-instr=yes.

Why: on a loopback round trip the server runs between two statements on
the same cores and evicts the client's caches, so every line of code the
client runs per statement is fetched again each time (about 12 ns each on
the CI machines: 128 extra scattered lines cost 1.6 us per statement).
The count repeats exactly, like callgrind's instruction counts.

    bench/codelines.py [--json] [--top N] [--min-ratio R] PROFILE STATEMENTS
    bench/codelines.py --compare [--json] [--top N] PROFILE_A PROFILE_B STATEMENTS

A line counts when one of its instructions ran at least R x STATEMENTS
times (default R = 0.9: once per statement, allowing for warm-up); run
many more statements than setup and tear-down execute (10,000 is plenty).
--compare prints the per-function difference A - B.  bench/ab.sh and
bench/README.md show how the profiles are made.
"""
import collections
import json
import re
import sys


def parse(path):
    """(object, function, address) -> instructions executed there."""
    names = {"ob": {}, "fn": {}}
    cost = collections.Counter()
    ob = fn = None
    pos = 0
    after_call = False
    ref = re.compile(r"(c?)(ob|fn)=\((\d+)\)\s*(.*)")
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            m = ref.match(line)
            if m:
                kind, key, name = m.group(2), m.group(3), m.group(4)
                if name:
                    names[kind][key] = name
                if not m.group(1):  # cob= / cfn= only name the callee
                    if kind == "ob":
                        ob = names["ob"][key]
                    else:
                        fn = names["fn"][key]
                continue
            if line.startswith("calls="):
                after_call = True  # the next cost line is the call's, inclusive
                continue
            head = line[0]
            if head not in "0123456789+-*":
                continue
            parts = line.split()
            p = parts[0]
            if p.startswith("0x"):
                pos = int(p, 16)
            elif head == "+":
                pos += int(p[1:])
            elif head == "-":
                pos -= int(p[1:])
            elif p != "*":
                continue
            if after_call:
                after_call = False
                continue
            if len(parts) >= 3:
                cost[(ob, fn, pos)] += int(parts[-1])
    return cost


def footprint(path, statements, ratio):
    """{(library, function): set of line numbers}"""
    lines = collections.defaultdict(set)
    for (ob, fn, pos), n in parse(path).items():
        if n >= statements * ratio:
            lines[(ob.rsplit("/", 1)[-1], fn)].add(pos >> 6)
    return lines


def per_library(fp):
    libs = collections.defaultdict(set)
    for (lib, _), s in fp.items():
        libs[lib] |= s
    return {lib: len(s) for lib, s in libs.items()}


def usage(code):
    sys.stderr.write(__doc__.split("Why:")[0] + "\nusage: see the top of " + sys.argv[0] + "\n")
    sys.exit(code)


def main(argv):
    opts = {"json": False, "top": 25, "ratio": 0.9, "compare": False}
    args = []
    it = iter(argv)
    for a in it:
        if a == "--json":
            opts["json"] = True
        elif a == "--compare":
            opts["compare"] = True
        elif a == "--top":
            opts["top"] = int(next(it))
        elif a == "--min-ratio":
            opts["ratio"] = float(next(it))
        elif a in ("-h", "--help"):
            usage(0)
        else:
            args.append(a)
    if len(args) != (3 if opts["compare"] else 2):
        usage(2)
    n = int(args[-1])
    fps = [footprint(p, n, opts["ratio"]) for p in args[:-1]]
    libs = [per_library(fp) for fp in fps]
    totals = [sum(lb.values()) for lb in libs]
    if opts["compare"]:
        a, b = fps
        keys = set(a) | set(b)
        fns = sorted(((len(a.get(k, ())) - len(b.get(k, ())), k) for k in keys),
                     key=lambda x: (-abs(x[0]), x[1]))
        fns = [(d, k) for d, k in fns if d != 0][: opts["top"]]
        if opts["json"]:
            print(json.dumps({"lines_a": totals[0], "lines_b": totals[1],
                              "libraries_a": libs[0], "libraries_b": libs[1],
                              "functions": [{"library": k[0], "function": k[1], "difference": d}
                                            for d, k in fns]}))
            return 0
        print("code lines per statement: A %d, B %d, difference %+d" %
              (totals[0], totals[1], totals[0] - totals[1]))
        for lib in sorted(set(libs[0]) | set(libs[1])):
            print("  %-40s %5d %5d" % (lib, libs[0].get(lib, 0), libs[1].get(lib, 0)))
        print("largest differences by function:")
        for d, k in fns:
            print("  %+5d  %s %s" % (d, k[0], k[1]))
        return 0
    fp = fps[0]
    fns = sorted(((len(s), k) for k, s in fp.items()), key=lambda x: (-x[0], x[1]))
    if opts["json"]:
        print(json.dumps({"lines": totals[0], "libraries": libs[0],
                          "functions": [{"library": k[0], "function": k[1], "lines": c}
                                        for c, k in fns[: opts["top"]]]}))
        return 0
    print("code lines per statement: %d" % totals[0])
    for lib, c in sorted(libs[0].items(), key=lambda x: -x[1]):
        print("  %-40s %5d" % (lib, c))
    print("functions (a line shared by two functions counts in both):")
    for c, k in fns[: opts["top"]]:
        print("  %5d  %s %s" % (c, k[0], k[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
