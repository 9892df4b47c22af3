# SPDX-License-Identifier: MIT
"""run_notebook.py without a GPU: a notebook of plain Python and a
matplotlib figure run without Jupyter, its outputs saved in the notebook,
nothing written after a failed or stopped run; and the committed
transformer_timing.ipynb (its cells parse, and it stops with 77 here)."""

import ast
import base64
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TOOL = HERE / "run_notebook.py"


def notebook(path, *cells):
    """Write a notebook of @cells ("# md" strings are markdown) at @path."""
    nb = {"cells": [], "metadata": {"kernelspec": {"name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    for i, src in enumerate(cells):
        cell = {"id": f"c{i}", "metadata": {}, "source": src.splitlines(keepends=True)}
        if src.startswith("# md"):
            cell["cell_type"] = "markdown"
        else:
            cell.update(cell_type="code", outputs=[], execution_count=None)
        nb["cells"].append(cell)
    path.write_text(json.dumps(nb))
    return path


def run(src, out, *args, cwd=None):
    return subprocess.run([sys.executable, str(TOOL), str(src), str(out), *args],
                          capture_output=True, text=True, cwd=cwd)


def test_text_outputs_argv_and_working_directory(tmp_path):
    (tmp_path / "nbs").mkdir()
    src = notebook(tmp_path / "nbs" / "in.ipynb",
                   "# md\n# Title", "import os, sys\nprint(sys.argv[1:], os.getcwd())\n"
                   "print('warn', file=sys.stderr)", "x = 6 * 7\nx", "y = None\ny")
    r = run(src, tmp_path / "out.ipynb", "--", "--check", "--n", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "out.ipynb").read_text())
    title, first, second, third = out["cells"]
    assert title == json.loads(src.read_text())["cells"][0]  # markdown kept as it was
    assert [c["id"] for c in out["cells"]] == ["c0", "c1", "c2", "c3"]
    # the cells run in the notebook's folder, as Jupyter runs them
    assert first["outputs"] == [
        {"output_type": "stream", "name": "stdout",
         "text": [f"['--check', '--n', '3'] {tmp_path / 'nbs'}\n"]},
        {"output_type": "stream", "name": "stderr", "text": ["warn\n"]}]
    assert [c["execution_count"] for c in (first, second, third)] == [1, 2, 3]
    assert second["outputs"] == [{"output_type": "execute_result", "execution_count": 2,
                                  "data": {"text/plain": ["42"]}, "metadata": {}}]
    assert third["outputs"] == []  # None shows nothing, as in Jupyter
    ran = out["metadata"]["executed_by"]
    assert ran["jupyter"] is False and ran["runner"].endswith("run_notebook.py")
    assert out["metadata"]["kernelspec"] == {"name": "python3"}


def test_cwd_option_and_in_place(tmp_path):
    src = notebook(tmp_path / "nb.ipynb", "import os\nprint(os.getcwd())")
    work = tmp_path / "work"
    work.mkdir()
    r = run(src, src, "--cwd", str(work))
    assert r.returncode == 0, r.stderr
    cell = json.loads(src.read_text())["cells"][0]
    assert cell["outputs"][0]["text"] == [f"{work}\n"]


def test_open_figures_become_pngs(tmp_path):
    pytest.importorskip("matplotlib")
    src = notebook(tmp_path / "nb.ipynb",
                   "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
                   "ax.plot([1, 3, 2])\nprint('drawn')",
                   "import matplotlib\nprint(matplotlib.get_backend(), len(plt.get_fignums()))")
    r = run(src, tmp_path / "out.ipynb")
    assert r.returncode == 0, r.stderr
    plot, after = json.loads((tmp_path / "out.ipynb").read_text())["cells"]
    assert plot["outputs"][0]["text"] == ["drawn\n"]
    figs = [o for o in plot["outputs"] if o["output_type"] == "display_data"]
    assert len(figs) == 1
    assert base64.b64decode(figs[0]["data"]["image/png"]).startswith(b"\x89PNG")
    # Agg without a display; the figure closed after its cell
    assert after["outputs"][0]["text"][0].lower() == "agg 0\n"


@pytest.mark.parametrize("cells, code, why", [
    (("print('no gpu')\nraise SystemExit(77)",), 77, "stopped the run (exit 77)"),
    (("x = 1", "raise SystemExit(1)"), 1, "cell 2 stopped the run (exit 1)"),
    (("x = 1", "undefined_name"), 1, "cell 2 failed"),
])
def test_no_notebook_after_a_failed_run(tmp_path, cells, code, why):
    r = run(notebook(tmp_path / "nb.ipynb", *cells), tmp_path / "out.ipynb")
    assert r.returncode == code
    assert why in r.stderr and "no notebook written" in r.stderr
    assert not (tmp_path / "out.ipynb").exists()


def test_not_a_v4_notebook(tmp_path):
    src = tmp_path / "old.ipynb"
    src.write_text(json.dumps({"nbformat": 3, "worksheets": []}))
    r = run(src, tmp_path / "out.ipynb")
    assert r.returncode == 1 and "nbformat 3, not 4" in r.stderr


def test_transformer_notebook_parses_and_skips_here(tmp_path):
    nb = json.loads((HERE / "transformer_timing.ipynb").read_text())
    assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for cell in code:
        ast.parse("".join(cell["source"]))
    if importlib.util.find_spec("torch"):
        pytest.skip("torch is installed: example_transformer_timing (gpu) runs it")
    r = run(HERE / "transformer_timing.ipynb", tmp_path / "out.ipynb", "--", "--check",
            "--probe", str(tmp_path / "none.bpf.o"))
    assert r.returncode == 77, r.stderr
    assert "nothing to run" in r.stdout
