#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The README's synopsis of the egpu tool is what `egpu --help` prints, and
each command's usage line names every option its `egpu COMMAND --help`
explains. Checks both (ctest readme_cli); --write puts `egpu --help`'s
lines into the README.

usage: readme_cli.py EGPU README.md [--write]
"""
import re
import subprocess
import sys

HEADING = "## The `egpu` tool"


def run(egpu, *args):
    return subprocess.run([egpu, *args], check=True, capture_output=True,
                          text=True).stdout


def synopsis(egpu):
    """`egpu --help`'s command lines, without their indent."""
    return [l.strip() for l in run(egpu, "--help").splitlines()
            if l.startswith("  egpu ")]


def block(readme):
    """(start, end) of the fenced block under HEADING, fences excluded."""
    at = readme.find(HEADING)
    start = readme.find("```\n", at) + 4 if at >= 0 else -1
    end = readme.find("\n```", start)
    if at < 0 or start < 4 or end < 0:
        sys.exit(f"readme_cli: no fenced block under '{HEADING}'")
    return start, end


def missing_options(egpu, line):
    """Options `egpu CMD --help` explains that its usage line lacks."""
    cmd = line.split()[1]
    details = run(egpu, cmd, "--help").splitlines()[1:]
    usage = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", line))
    opts = set()
    for d in details:
        m = re.match(r"\s+((?:--?[a-z][\w-]*(?:,\s*)?)+)", d)
        if m:
            opts.update(re.findall(r"--?[a-z][\w-]*", m.group(1)))
    return cmd, sorted(opts - usage)


def main():
    args = sys.argv[1:]
    write = "--write" in args
    args = [a for a in args if a != "--write"]
    if len(args) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    egpu, path = args
    with open(path) as f:
        readme = f.read()
    start, end = block(readme)
    want = synopsis(egpu)
    bad = 0
    for line in want:
        cmd, lacking = missing_options(egpu, line)
        if lacking:
            print(f"egpu {cmd}: --help explains {', '.join(lacking)}, "
                  "its usage line lacks them")
            bad += 1
    have = readme[start:end].splitlines()
    if write:
        with open(path, "w") as f:
            f.write(readme[:start] + "\n".join(want) + readme[end:])
    elif have != want:
        print(f"{path}: the synopsis under '{HEADING}' differs from "
              "`egpu --help` (scripts/readme_cli.py EGPU README.md --write):")
        for line in sorted(set(have) ^ set(want)):
            print(("  README: " if line in have else "  --help: ") + line)
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
