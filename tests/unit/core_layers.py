#!/usr/bin/env python3
"""core_layers.py -- fail when core/'s modules depend on each other in a cycle.

A module is a .c file and its .h (core/route.c + core/route.h).  A module
in several files keeps its insides in X_int.h: that header and every
X_*.c file including it belong to module X (route_cond.c, route_int.h are
module route).  Module A depends on module B when one of A's files
includes one of B's headers.  The modules must
form layers (utilities -> sql -> config -> snapshot -> route -> rewrite ->
execution -> result/merge -> public API), so the dependency graph must have
no cycle; each cycle found is printed as a path.  No file of core/ may
be longer than MAX_LINES either: one concept per file.  Usage: core_layers.py [CORE_DIR]
"""
import os
import re
import sys

MAX_LINES = 1500
INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+)\.h"', re.M)


def module_of(base, includes):
    """The module a file (basename, its includes) belongs to."""
    if base.endswith("_int"):
        return base[:-4]
    for inc in includes:
        if inc.endswith("_int") and base.startswith(inc[:-4] + "_"):
            return inc[:-4]
    return base


def graph(core):
    files = {}
    for name in os.listdir(core):
        base, ext = os.path.splitext(name)
        if ext in (".c", ".h"):
            with open(os.path.join(core, name), encoding="utf-8") as f:
                files[name] = (base, ext, INCLUDE.findall(f.read()))
    header_module = {}
    for name, (base, ext, incs) in files.items():
        if ext == ".h":
            header_module[base] = module_of(base, incs)
    deps = {}
    for name, (base, ext, incs) in files.items():
        mod = module_of(base, incs)
        mods = deps.setdefault(mod, set())
        mods.update(header_module[d] for d in incs
                    if d in header_module and header_module[d] != mod)
    return deps


def cycles(deps):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(deps.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(deps):
        if v not in index:
            visit(v)
    return out


def path_in(deps, comp):
    """One cycle through the component's first module, for the message."""
    start, members = comp[0], set(comp)
    prev, todo = {start: None}, [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(deps[v]):
            if w == start:
                p = [v]
                while prev[p[-1]] is not None:
                    p.append(prev[p[-1]])
                return " -> ".join(reversed(p)) + " -> " + start
            if w in members and w not in prev:
                prev[w] = v
                todo.append(w)
    return " ".join(comp)


def main():
    core = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "core")
    deps = graph(core)
    found = cycles(deps)
    long_files = []
    for name in sorted(os.listdir(core)):
        if name.endswith((".c", ".h")):
            with open(os.path.join(core, name), encoding="utf-8") as f:
                n = sum(1 for _ in f)
            if n > MAX_LINES:
                long_files.append(name)
                print("core_layers: core/%s has %d lines, more than %d: split it by concept"
                      % (name, n, MAX_LINES))
    for comp in found:
        print("core_layers: modules depend on each other in a cycle (%d modules: %s): %s"
              % (len(comp), ", ".join(comp), path_in(deps, comp)))
    if found or long_files:
        return 1
    print("core_layers: %d modules, no cycle, no file over %d lines" % (len(deps), MAX_LINES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
