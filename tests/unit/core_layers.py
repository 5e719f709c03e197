#!/usr/bin/env python3
"""core_layers.py -- fail when core/'s folders or modules depend upwards.

core/ is a stack of subsystem folders; their order, bottom to top, is the
order of CORE_INCLUDES in Makefile.am (docs/architecture.md describes each).
A file may use its own folder and the folders below it, never one above:

  - includes: every `#include "x.h"` of a core file must name a header of
    its own folder or of a folder below;
  - calls: every symbol an object file of libdalcore needs (nm's `U`) and
    another object file of libdalcore defines must be defined in the same
    folder or one below.  The objects are read from the build directory,
    so a call through a declaration written by hand, without any include,
    is caught as well.

Inside a folder, modules (a .c file and its .h; a module in several files
keeps its insides in X_int.h, and every X_*.c including it belongs to
module X, as does an X_Y.c without a header of its own) must not depend on each other in a cycle, by includes or calls.
No file of core/ may be longer than MAX_LINES (one concept per file), and no
two files of core/, proxy/, tools/, plugins/ and include/dal/ may share a
name.

Before checking the tree, the script checks itself on a small tree it
writes and compiles, with a call and an include that point up: both must
be reported.  Usage: core_layers.py [SRCDIR [BUILDDIR]] (default: the
environment's DAL_SRCDIR and DAL_BUILDDIR, as `make check` sets them).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_LINES = 1500
INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+\.h)"', re.M)
FOLDERS = re.compile(r'-I\$\(top_srcdir\)/core/([a-z_]+)')
OBJECT = re.compile(r'^libdalcore_la-([A-Za-z0-9_]+)\.o$')
UNIQUE_NAMES_IN = ("core", "proxy", "tools", "plugins", "include/dal")


def folder_order(srcdir):
    """Folder -> rank, from Makefile.am's CORE_INCLUDES (bottom first)."""
    with open(os.path.join(srcdir, "Makefile.am"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'^CORE_INCLUDES\s*=((?:.*\\\n)*.*)$', text, re.M)
    if m is None:
        sys.exit("core_layers: Makefile.am has no CORE_INCLUDES")
    return {name: rank for rank, name in enumerate(FOLDERS.findall(m.group(1)))}


def core_files(core):
    """name -> (folder, text) for every .c and .h under core/FOLDER/."""
    files = {}
    for path in sorted(glob.glob(os.path.join(core, "*", "*.[ch]"))):
        with open(path, encoding="utf-8") as f:
            files[os.path.basename(path)] = (os.path.basename(os.path.dirname(path)), f.read())
    return files


def module_of(name, includes, names):
    """The module a file belongs to: X_int.h and the X_*.c files including
    it are module X, and so is an X_Y.c that has no X_Y.h of its own."""
    base = os.path.splitext(name)[0]
    if base.endswith("_int"):
        return base[:-4]
    for inc in includes:
        stem = inc[:-2]
        if stem.endswith("_int") and base.startswith(stem[:-4] + "_"):
            return stem[:-4]
    if name.endswith(".c") and base + ".h" not in names and "_" in base:
        head = base.rsplit("_", 1)[0]
        if head + ".h" in names:
            return head
    return base


def defined_and_needed(objects):
    """source name -> (defined symbols, needed symbols), via nm."""
    out = {}
    for path in objects:
        m = OBJECT.match(os.path.basename(path))
        if m is None:
            continue
        text = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
        defined, needed = set(), set()
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRCVW":
                defined.add(parts[2])
            elif len(parts) == 2 and parts[0] == "U":
                needed.add(parts[1])
        out[m.group(1) + ".c"] = (defined, needed)
    return out


def objects_of(builddir):
    """libdalcore's object files, one per source (PIC copies preferred)."""
    found = {}
    for pattern in ("core/*/libdalcore_la-*.o", "core/*/.libs/libdalcore_la-*.o"):
        for path in glob.glob(os.path.join(builddir, pattern)):
            found[os.path.basename(path)] = path
    return sorted(found.values())


def check(srcdir, core, objects):
    """Every problem found, as messages; [] when the tree keeps its layers."""
    order = folder_order(srcdir)
    files = core_files(core)
    problems, edges = [], {}
    folders = sorted({d for d, _ in files.values()})
    for d in folders:
        if d not in order:
            problems.append("core/%s/ is not in Makefile.am's CORE_INCLUDES: give it its place" % d)
    includes = {name: INCLUDE.findall(text) for name, (_, text) in files.items()}
    module = {name: module_of(name, includes[name], files) for name in files}

    def depend(a, b, how):
        fa, fb = files[a][0], files[b][0]
        if fa not in order or fb not in order:
            return
        if order[fb] > order[fa]:
            problems.append("core/%s/%s %s core/%s/%s: a dependency that points up (%s is above %s)"
                            % (fa, a, how, fb, b, fb, fa))
        elif fa == fb and module[a] != module[b]:
            edges.setdefault(module[a], {}).setdefault(module[b], "%s %s %s" % (a, how, b))

    for name, incs in includes.items():
        for h in incs:
            if h in files:
                depend(name, h, "includes")
    symbols = defined_and_needed(objects)
    owner = {}
    for src, (defined, _) in symbols.items():
        for s in defined:
            owner[s] = src
    for src, (_, needed) in symbols.items():
        if src not in files:
            problems.append("object of %s has no source under core/FOLDER/" % src)
            continue
        for s in sorted(needed):
            if s in owner and owner[s] != src and owner[s] in files:
                depend(src, owner[s], "calls %s() of" % s)
    for comp in cycles(edges):
        problems.append("modules depend on each other in a cycle: %s" % path_in(edges, comp))
    for name, (d, text) in sorted(files.items()):
        n = text.count("\n")
        if n > MAX_LINES:
            problems.append("core/%s/%s has %d lines, more than %d: split it by concept"
                            % (d, name, n, MAX_LINES))
    problems += shared_names(srcdir)
    return problems, len(symbols)


def shared_names(srcdir):
    """Two files of the source folders with one name."""
    seen, out = {}, []
    for top in UNIQUE_NAMES_IN:
        for root, _, names in os.walk(os.path.join(srcdir, top)):
            for name in names:
                if name.endswith((".c", ".h")):
                    path = os.path.relpath(os.path.join(root, name), srcdir)
                    if name in seen:
                        out.append("%s and %s share a name: rename one" % (seen[name], path))
                    else:
                        seen[name] = path
    return out


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
    """One cycle through the component's first module, each step explained."""
    start, members = comp[0], set(comp)
    prev, todo = {start: None}, [start]
    while todo:
        v = todo.pop(0)
        if start in deps.get(v, {}):
            steps, at = [deps[v][start]], v
            while prev[at] is not None:
                steps.append(deps[prev[at]][at])
                at = prev[at]
            return "; ".join(reversed(steps))
        for w in sorted(deps.get(v, ())):
            if w in members and w not in prev:
                prev[w] = v
                todo.append(w)
    return " ".join(comp)


SELF_TEST_FILES = {
    "Makefile.am": "CORE_INCLUDES = -I$(top_srcdir)/core/low -I$(top_srcdir)/core/high\n",
    "core/low/a.h": "int a(void);\n",
    "core/low/a.c": '#include "b.h"\nint b(void);\nint a(void) { return b(); }\n',
    "core/high/b.h": "int b(void);\n",
    "core/high/b.c": '#include "a.h"\nint b(void) { return 1; }\nint c(void) { return a(); }\n',
}


def self_test():
    """The check must report the up include and the up call of a small tree."""
    cc = os.environ.get("CC", "cc").split()
    tmp = tempfile.mkdtemp(prefix="core_layers.")
    try:
        objects = []
        for rel, text in SELF_TEST_FILES.items():
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        for d in ("low", "high"):
            for src in glob.glob(os.path.join(tmp, "core", d, "*.c")):
                obj = os.path.join(os.path.dirname(src), "libdalcore_la-" +
                                   os.path.basename(src)[:-2] + ".o")
                subprocess.run(cc + ["-c", "-I", os.path.join(tmp, "core", "low"), "-I",
                                     os.path.join(tmp, "core", "high"), "-o", obj, src], check=True)
                objects.append(obj)
        problems, _ = check(tmp, os.path.join(tmp, "core"), objects)
        want = ("core/low/a.c includes core/high/b.h", "core/low/a.c calls b() of core/high/b.c")
        missing = [w for w in want if not any(p.startswith(w) for p in problems)]
        if missing:
            print("core_layers: self-test: not reported: %s (got: %s)" % (missing, problems))
            return False
        return True
    finally:
        shutil.rmtree(tmp)


def main():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    srcdir = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("DAL_SRCDIR", here)
    builddir = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("DAL_BUILDDIR", srcdir)
    if not self_test():
        return 1
    objects = objects_of(builddir)
    if not objects:
        print("core_layers: no libdalcore object files under %s/core: build first" % builddir)
        return 1
    problems, nobjects = check(srcdir, os.path.join(srcdir, "core"), objects)
    for p in problems:
        print("core_layers: " + p)
    if problems:
        return 1
    print("core_layers: %d folders in order, %d object files' calls and every include point "
          "down, no module cycle, no file over %d lines, no shared file name"
          % (len(folder_order(srcdir)), nobjects, MAX_LINES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
