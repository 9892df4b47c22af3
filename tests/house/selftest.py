#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""house.py finds what it is there to find: a tree of two stages, built
here, with a cycle between two files of one stage, an arrow up, and a
client calling the public API, then the same tree fixed.

usage: selftest.py HOUSE_PY CC
"""
import json
import os
import subprocess
import sys
import tempfile

CMAKE = """set(EGPU_STAGES low high)
set(EGPU_BELOW_low)
set(EGPU_BELOW_high low)  # a comment: (not a list)
"""
MAP = "V { global: api_*; local: *; };\n"
SOURCES = {
    "low/a.c": "int b(void); int a(void) { return b(); }\n",
    "low/b.c": "int a(void); int b(void) { return a(); }\n",
    "low/up.c": "int h(void); int up(void) { return h(); }\n",
    "high/h.c": "int a(void); int h(void) { return a(); }\n"
                "int api_x(void) { return 1; }\n",
    "client/c.c": "int api_x(void); int c(void) { return api_x(); }\n",
}
FIXED = {
    "low/b.c": "int b(void) { return 0; }\n",
    "low/up.c": "int up(void) { return 0; }\n",
}


def build(root, cc, sources):
    commands = []
    for name, text in sources.items():
        src = os.path.join(root, "lib", name)
        os.makedirs(os.path.dirname(src), exist_ok=True)
        with open(src, "w") as f:
            f.write(text)
        stage = name.split("/")[0]
        target = "egpu_" + stage if stage != "client" else "egpu_client"
        obj = os.path.join(root, "build", "CMakeFiles", target + ".dir",
                           name + ".o")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        subprocess.run([cc, "-c", src, "-o", obj], check=True)
        commands.append({"directory": root, "file": src,
                         "command": f"{cc} -o {obj} -c {src}"})
    with open(os.path.join(root, "build", "compile_commands.json"), "w") as f:
        json.dump(commands, f)


def run(house, root):
    p = subprocess.run([sys.executable, house, root,
                        os.path.join(root, "build")],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    house, cc = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "lib"))
        with open(os.path.join(root, "lib", "CMakeLists.txt"), "w") as f:
            f.write(CMAKE)
        with open(os.path.join(root, "lib", "egpu.map"), "w") as f:
            f.write(MAP)
        build(root, cc, SOURCES)
        rc, out = run(house, root)
        print(out)
        want = ["low -> high: 1   UPWARD", "low/up.c -> high/h.c: h",
                "call cycles between files of a stage: 1", "low/a.c low/b.c",
                "low/a.c -> low/b.c: b", "low/b.c -> low/a.c: a",
                "client -> high: 1\n", "1 upward file arrows, 1 cycles"]
        missing = [w for w in want if w not in out]
        if rc != 1 or missing:
            sys.exit(f"selftest: rc {rc}, missing {missing}")
        build(root, cc, {**SOURCES, **FIXED})
        rc, out = run(house, root)
        print(out)
        if rc != 0 or "UPWARD" in out or "cycles between files of a stage: 0" not in out:
            sys.exit(f"selftest: the fixed tree fails (rc {rc})")
    print("selftest: ok")


if __name__ == "__main__":
    main()
