#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run a notebook's code cells without Jupyter and save their outputs.

    run_notebook.py IN.ipynb OUT.ipynb [--cwd DIR] [-- ARGS]

The code cells run in order in one namespace, as a Jupyter kernel runs
them, in IN's folder (Jupyter's working directory for a notebook) unless
--cwd names another, with sys.argv = [IN, ARGS...]: a notebook may read
options such as --check there (in Jupyter it gets none of its own).
matplotlib draws with its Agg backend unless MPLBACKEND says otherwise.

Each code cell gets what it printed (stdout, then stderr: not interleaved
as Jupyter would), the repr of a last bare expression other than None, and
every matplotlib figure left open, as an embedded PNG (the figures are
then closed, as Jupyter's inline backend does). This is not IPython:
magics (%, !) are syntax errors, display() and rich HTML reprs do not
exist. OUT (IN itself is fine) is IN with these outputs in its code cells
and metadata.executed_by saying that this script, not Jupyter, ran it.

A cell that raises, or stops the run (SystemExit; e.g. exit 77 for
"nothing to run here", 1 for a failed check), writes no notebook: the exit
status is the cell's (1 for an exception), so a notebook written holds the
outputs of a run that went through. Needs only the standard library (and,
to run, what the notebook needs). make_notebook.py runs its cells here too.
"""

import argparse
import ast
import base64
import contextlib
import datetime
import io
import json
import os
import platform
import sys
import traceback
from pathlib import Path


def text_lines(text):
    """nbformat's multi-line strings: a list of lines keeping their \\n."""
    return text.splitlines(keepends=True)


class Kernel:
    """Runs cells in one namespace as Jupyter's kernel would, with
    sys.argv = argv; ``file`` (if given) becomes __file__."""

    def __init__(self, argv, file=None):
        self.ns = {"__name__": "__main__"}
        if file is not None:
            self.ns["__file__"] = str(file)
        self.count = 0
        sys.argv = [str(a) for a in argv]

    def run(self, source):
        """Outputs of one cell. An exception (SystemExit included) goes
        through to the caller, the cell's output so far printed first."""
        self.count += 1
        where = f"<cell {self.count}>"
        tree = ast.parse(source, where)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                exec(compile(tree, where, "exec"), self.ns)
                value = None
                if last is not None:
                    value = eval(compile(ast.Expression(last.value), where, "eval"), self.ns)
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


def executed_by(runner):
    """The notebook metadata saying how its outputs were made."""
    return {"runner": runner, "jupyter": False,
            "python": platform.python_version(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def execute(nb, kernel, cwd, runner="examples/notebook/run_notebook.py"):
    """@nb (nbformat 4 dict) with the outputs of its code cells run by
    @kernel in folder @cwd, or the exit status when a cell failed or
    stopped the run (its output and the reason on stderr)."""
    here = os.getcwd()
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.chdir(cwd)
    try:
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            cell["outputs"] = kernel.run("".join(cell["source"]))
            cell["execution_count"] = kernel.count
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
        print(f"{runner}: cell {kernel.count} stopped the run (exit {code}); "
              "no notebook written", file=sys.stderr)
        return code or 1
    except Exception:
        traceback.print_exc()
        print(f"{runner}: cell {kernel.count} failed; no notebook written", file=sys.stderr)
        return 1
    finally:
        os.chdir(here)
    nb.setdefault("metadata", {})["executed_by"] = executed_by(runner)
    return nb


def write(nb, path):
    """@nb as Jupyter writes notebooks (one-space indent, sorted keys)."""
    Path(path).write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("notebook", help="the notebook to run (IN.ipynb)")
    ap.add_argument("out", help="where the notebook with outputs goes (OUT.ipynb)")
    ap.add_argument("--cwd", help="folder the cells run in (default: IN's)")
    ap.add_argument("args", nargs="*", help="after --: the notebook's sys.argv[1:]")
    args = ap.parse_args()

    src = Path(args.notebook).resolve()
    nb = json.loads(src.read_text())
    if nb.get("nbformat") != 4:
        print(f"{src}: nbformat {nb.get('nbformat')}, not 4", file=sys.stderr)
        return 1
    kernel = Kernel([src] + args.args)
    result = execute(nb, kernel, args.cwd or src.parent)
    if isinstance(result, int):
        return result
    write(result, args.out)
    print(f"wrote {args.out}: {kernel.count} code cells run, outputs saved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
