#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write threadhist.ipynb from threadhist.py, with the outputs of a real run.

    make_notebook.py [--no-run] [--script PY] [--out IPYNB] [-- SCRIPT ARGS]
    make_notebook.py --compare IPYNB

The script is in the "percent" format: every `# %%` line starts a code cell,
every `# %% [markdown]` line a markdown cell (its lines without their `# `).
Without --no-run run_notebook.py runs the cells (in order, in one
namespace, as a Jupyter kernel runs them) in a fresh working directory,
with the script's arguments `--check` and any given after `--`, and
records each cell's outputs: what it prints, the value of a last bare
expression, and every matplotlib figure it leaves open, as an embedded PNG.
A cell that raises, or a script that stops (exit 77:
no GPU, CuPy or matplotlib; 1: its check failed), writes no notebook, so a
written one only ever holds the outputs of a run that passed.

--no-run writes the cells without outputs. --compare exits 1 unless a
notebook's cells (kinds and sources) are the script's, ignoring outputs.
Needs only the standard library (and, to run, what the script needs).
"""

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from run_notebook import Kernel, execute, text_lines, write

HERE = Path(__file__).resolve().parent
MARKER = re.compile(r"# %%( \[markdown\])?\s*$")


def read_cells(script):
    """[(kind, source)] of the script; lines before the first marker (the
    licence line) belong to no cell."""
    cells, kind, lines = [], None, []

    def flush():
        if kind is None:
            return
        text = "\n".join(lines).strip("\n")
        if kind == "markdown":
            text = "\n".join(re.sub(r"^# ?", "", l) for l in text.split("\n"))
        cells.append((kind, text))

    for line in Path(script).read_text().split("\n"):
        m = MARKER.match(line)
        if m:
            flush()
            kind, lines = ("markdown" if m.group(1) else "code"), []
        else:
            lines.append(line)
    flush()
    return cells


def notebook(cells):
    """The nbformat 4.5 document of @cells, without outputs."""
    out = []
    for i, (kind, source) in enumerate(cells):
        cell = {"cell_type": kind, "id": f"cell-{i}", "metadata": {},
                "source": text_lines(source)}
        if kind == "code":
            cell.update(outputs=[], execution_count=None)
        out.append(cell)
    return {"cells": out, "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def compare(cells, path):
    """0 when the notebook at @path has @cells, else 1 with the first difference."""
    have = [(c["cell_type"], "".join(c["source"]))
            for c in json.loads(Path(path).read_text())["cells"]]
    for i, (want, got) in enumerate(zip(cells, have)):
        if want != got:
            print(f"{path}: cell {i} differs from the script's:\n--- script\n"
                  f"{want[1]}\n--- notebook\n{got[1]}", file=sys.stderr)
            return 1
    if len(have) != len(cells):
        print(f"{path}: {len(have)} cells, the script has {len(cells)}", file=sys.stderr)
        return 1
    print(f"{path}: the {len(cells)} cells match the script")
    return 0


def run_cells(cells, script, argv):
    """The notebook with outputs, or an exit code when a cell failed."""
    kernel = Kernel([script, "--check"] + argv, file=script)
    with tempfile.TemporaryDirectory(prefix="threadhist-nb-") as work:
        # the script writes its plot and PTX in its working directory
        return execute(notebook(cells), kernel, work, runner="make_notebook")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--script", default=str(HERE / "threadhist.py"))
    ap.add_argument("--out", default=str(HERE / "threadhist.ipynb"))
    ap.add_argument("--no-run", action="store_true", help="write the cells without outputs")
    ap.add_argument("--compare", metavar="IPYNB", help="check a notebook's cells against the script")
    ap.add_argument("script_args", nargs="*", help="after --: more arguments for the script")
    args = ap.parse_args()

    script = Path(args.script).resolve()
    cells = read_cells(script)
    if args.compare:
        return compare(cells, args.compare)
    nb = notebook(cells) if args.no_run else run_cells(cells, script, args.script_args)
    if isinstance(nb, int):
        return nb
    write(nb, args.out)
    print(f"wrote {args.out}: {len(cells)} cells"
          + ("" if args.no_run else ", with the outputs of this run"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
