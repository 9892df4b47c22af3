#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write threadhist.ipynb from threadhist.py, with the outputs of a real run.

    make_notebook.py [--no-run] [--script PY] [--out IPYNB] [-- SCRIPT ARGS]
    make_notebook.py --compare IPYNB

The script is in the "percent" format: every `# %%` line starts a code cell,
every `# %% [markdown]` line a markdown cell (its lines without their `# `).
Without --no-run the cells run in order in one namespace, as a Jupyter
kernel runs them, in a fresh working directory, with the script's arguments
`--check` and any given after `--`. Each cell's outputs are recorded: what
it prints, the value of a last bare expression, and every matplotlib figure
it leaves open, as an embedded PNG (figures are then closed, as Jupyter's
inline backend does). A cell that raises, or a script that stops (exit 77:
no GPU, CuPy or matplotlib; 1: its check failed), writes no notebook, so a
written one only ever holds the outputs of a run that passed.

--no-run writes the cells without outputs. --compare exits 1 unless a
notebook's cells (kinds and sources) are the script's, ignoring outputs.
Needs only the standard library (and, to run, what the script needs).
"""

import argparse
import ast
import base64
import contextlib
import io
import json
import os
import re
import sys
import tempfile
import traceback
from pathlib import Path

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


def text_lines(text):
    """nbformat's multi-line strings: a list of lines keeping their \\n."""
    return text.splitlines(keepends=True)


class Kernel:
    """Runs cells in one namespace as Jupyter's kernel would: the script's
    globals, __file__ naming the script, sys.argv its arguments."""

    def __init__(self, script, argv):
        self.ns = {"__name__": "__main__", "__file__": str(script)}
        self.count = 0
        sys.argv = [str(script)] + argv

    def run(self, source):
        """Outputs of one cell. An exception (SystemExit included) goes
        through to the caller, the cell's output so far printed first."""
        self.count += 1
        tree = ast.parse(source, f"<cell {self.count}>")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                exec(compile(tree, f"<cell {self.count}>", "exec"), self.ns)
                value = None
                if last is not None:
                    expr = ast.Expression(last.value)
                    value = eval(compile(expr, f"<cell {self.count}>", "eval"), self.ns)
        except BaseException:
            sys.stdout.write(out.getvalue())
            sys.stderr.write(err.getvalue())
            raise
        outputs = [{"output_type": "stream", "name": name, "text": text_lines(s.getvalue())}
                   for name, s in (("stdout", out), ("stderr", err)) if s.getvalue()]
        if value is not None:
            outputs.append({"output_type": "execute_result", "execution_count": self.count,
                            "data": {"text/plain": text_lines(repr(value))}, "metadata": {}})
        return outputs + self.figures()

    @staticmethod
    def figures():
        """Every open matplotlib figure as a PNG output, then closed."""
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return []
        outputs = []
        for num in plt.get_fignums():
            fig = plt.figure(num)
            png = io.BytesIO()
            fig.savefig(png, format="png", bbox_inches="tight")
            outputs.append({"output_type": "display_data", "metadata": {}, "data": {
                "image/png": base64.b64encode(png.getvalue()).decode(),
                "text/plain": [repr(fig)]}})
            plt.close(fig)
        return outputs


def notebook(cells, kernel=None):
    """The nbformat 4.5 document of @cells, run by @kernel if given."""
    out = []
    for i, (kind, source) in enumerate(cells):
        cell = {"cell_type": kind, "id": f"cell-{i}", "metadata": {},
                "source": text_lines(source)}
        if kind == "code":
            cell["outputs"] = kernel.run(source) if kernel else []
            cell["execution_count"] = kernel.count if kernel else None
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
    kernel = Kernel(script, ["--check"] + argv)
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="threadhist-nb-") as work:
        os.chdir(work)  # the script writes its plot and PTX here
        try:
            return notebook(cells, kernel)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
            print(f"make_notebook: the script stopped in cell {kernel.count} "
                  f"(exit {code}); no notebook written", file=sys.stderr)
            return code or 1
        except Exception:
            traceback.print_exc()
            print(f"make_notebook: cell {kernel.count} failed; no notebook written",
                  file=sys.stderr)
            return 1
        finally:
            os.chdir(cwd)


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
    Path(args.out).write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}: {len(cells)} cells"
          + ("" if args.no_run else ", with the outputs of this run"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
