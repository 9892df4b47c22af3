#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The house's call graph, file by file, held against its stages.

Reads the objects the build compiled from lib/ (their files from the
build's compile_commands.json), and with nm the symbols each one defines
and the symbols it needs: file A -> file B when A calls (or takes the
address of, or reads) something B defines. This is the linker's view of
the exact code built, with its macros and #ifs, from gcc or clang alike.

Each folder of lib/ is a stage; lib/CMakeLists.txt says which stages each
may use (EGPU_BELOW_<stage>, what the build enforces for #include). A
folder that is not a stage of libegpu (lib/attach) is a client of the
public API: it may also call what lib/egpu.map exports.

Prints the stage graph (arrows with the number of symbols, upward ones
marked) and every call cycle between files of one stage, with the symbols
that close it. Fails on any cycle and any upward arrow.

usage: house.py [-v] SOURCE_DIR BUILD_DIR   (-v: the symbols of every arrow)
"""
import collections
import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys


def cmake_lists(src):
    """EGPU_STAGES and each EGPU_BELOW_<stage> of lib/CMakeLists.txt."""
    with open(os.path.join(src, "lib", "CMakeLists.txt")) as f:
        text = re.sub(r"#.*", "", f.read())
    sets = {m.group(1): m.group(2).split()
            for m in re.finditer(r"set\((EGPU_\w+)([^)]*)\)", text)}
    stages = sets.get("EGPU_STAGES")
    if not stages:
        sys.exit("house.py: no set(EGPU_STAGES ...) in lib/CMakeLists.txt")
    below = {k[len("EGPU_BELOW_"):]: v for k, v in sets.items()
             if k.startswith("EGPU_BELOW_")}
    return stages, below


def public_patterns(src):
    """The global patterns of lib/egpu.map (the exported API)."""
    with open(os.path.join(src, "lib", "egpu.map")) as f:
        text = f.read()
    m = re.search(r"global:(.*?)local:", text, re.S)
    return [p.strip() for p in m.group(1).split(";") if p.strip()] if m else []


def object_of(command):
    """The -o of a compile command (older CMake writes no "output")."""
    args = command.get("arguments") or shlex.split(command.get("command", ""))
    return next((args[i + 1] for i in range(len(args) - 1)
                 if args[i] == "-o"), None)


def lib_objects(src, build):
    """{object path: (file name under lib/, target)} for what the build
    compiled."""
    path = os.path.join(build, "compile_commands.json")
    try:
        with open(path) as f:
            commands = json.load(f)
    except OSError as e:
        sys.exit(f"house.py: {e} (configure with CMAKE_EXPORT_COMPILE_COMMANDS)")
    roots = [os.path.join(os.path.realpath(d), "lib") + os.sep
             for d in (src, build)]
    objs = {}
    for c in commands:
        file = os.path.realpath(os.path.join(c["directory"], c["file"]))
        root = next((r for r in roots if file.startswith(r)), None)
        out = c.get("output") or object_of(c)
        if root is None or not out:
            continue
        obj = os.path.join(c["directory"], out)
        target = re.search(r"CMakeFiles/([^/]+)\.dir/", obj)
        if os.path.exists(obj) and target:
            objs[obj] = (file[len(root):], target.group(1))
    if not objs:
        sys.exit("house.py: no object of lib/ built yet")
    return objs


def symbols(objs):
    """{object: (defined globals, undefined references)}, by one nm."""
    out = subprocess.run(["nm", "-P", "-g", "-A"] + sorted(objs), check=True,
                         capture_output=True, text=True).stdout
    syms = {obj: (set(), set()) for obj in objs}
    for line in out.splitlines():
        obj, _, rest = line.partition(": ")
        parts = rest.split()
        if obj not in syms or len(parts) < 2:
            continue
        defs, refs = syms[obj]
        (refs if parts[1] in ("U", "w", "v") else defs).add(parts[0])
    return syms


def file_graph(objs, lib_targets):
    """{(caller file, callee file): [symbols]} between files of lib/. A
    library built on libegpu (lib/attach) links libegpu and itself: its
    symbols are not libegpu's. Its folder is one unit, whatever targets
    (object libraries, tests) compile its files."""
    defs, refs = collections.defaultdict(dict), {}
    syms = symbols(objs)
    for obj, (name, target) in objs.items():
        d, r = syms[obj]
        unit = "libegpu" if target in lib_targets else stage_of(name)
        refs[name] = (r, unit)
        for s in d:
            defs[unit].setdefault(s, name)
    edges = collections.defaultdict(list)
    for name, (r, unit) in refs.items():
        for s in sorted(r):
            callee = defs[unit].get(s) or defs["libegpu"].get(s)
            if callee and callee != name:
                edges[(name, callee)].append(s)
    return edges


def stage_of(name):
    return name.split("/", 1)[0]


def allowed(stages, below, public, caller, callee, syms):
    """Whether a caller stage may use @callee for all of @syms."""
    if callee in below.get(caller, []):
        return True
    if caller in stages:
        return False
    # A client of the public API (lib/attach).
    return all(any(fnmatch.fnmatchcase(s, p) for p in public) for s in syms)


def sccs(nodes, succ):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ.get(v, ()):
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
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    args = sys.argv[1:]
    verbose = args[:1] == ["-v"]
    args = args[verbose:]
    if len(args) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    src, build = args
    stages, below = cmake_lists(src)
    public = public_patterns(src)
    objs = lib_objects(src, build)
    edges = file_graph(objs, {"egpu_" + s for s in stages})
    files = {name for name, _ in objs.values()}

    arrows = collections.defaultdict(list)
    for (a, b), syms in edges.items():
        if stage_of(a) != stage_of(b):
            arrows[(stage_of(a), stage_of(b))].append(((a, b), syms))
    bad = 0
    print(f"stage graph ({len(objs)} files of lib/; arrow: symbols used)")
    for (sa, sb) in sorted(arrows):
        uses = arrows[(sa, sb)]
        wrong = [(ab, s) for ab, s in uses
                 if not allowed(stages, below, public, sa, sb, s)]
        count = sum(len(s) for _, s in uses)
        print(f"  {sa} -> {sb}: {count}" + ("   UPWARD" if wrong else ""))
        for (a, b), s in (uses if verbose else wrong):
            print(f"      {a} -> {b}: {', '.join(s)}")
        bad += len(wrong)

    succ = collections.defaultdict(set)
    for (a, b) in edges:
        if stage_of(a) == stage_of(b):
            succ[a].add(b)
    cycles = sccs(files, succ)
    print(f"call cycles between files of a stage: {len(cycles)}")
    for comp in cycles:
        print("  " + " ".join(comp))
        for a in comp:
            for b in comp:
                if (a, b) in edges:
                    print(f"      {a} -> {b}: {', '.join(edges[(a, b)])}")
    if bad or cycles:
        print(f"house.py: {bad} upward file arrows, {len(cycles)} cycles "
              "(docs/design.md, The house)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
