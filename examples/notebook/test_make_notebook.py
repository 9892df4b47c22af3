# SPDX-License-Identifier: MIT
"""make_notebook.py without a GPU: cells from a percent-format script, the
outputs of running them, refusals to write after a failed or stopped run,
and the committed threadhist.ipynb against threadhist.py."""

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TOOL = HERE / "make_notebook.py"

sys.path.insert(0, str(HERE))
import make_notebook  # noqa: E402


def make(tmp_path, *args):
    return subprocess.run([sys.executable, str(TOOL), "--out", str(tmp_path / "nb.ipynb"),
                           *args], capture_output=True, text=True, cwd=tmp_path)


def script(tmp_path, body):
    path = tmp_path / "s.py"
    path.write_text(body)
    return str(path)


def code_cells(tmp_path):
    nb = json.loads((tmp_path / "nb.ipynb").read_text())
    assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def test_cells_split_at_markers(tmp_path):
    path = script(tmp_path, "# licence\n# %% [markdown]\n# # Title\n#\n# text\n\n"
                  "# %%\nx = 1\n\n\n# %%\nprint(x)\n")
    assert make_notebook.read_cells(path) == [
        ("markdown", "# Title\n\ntext"), ("code", "x = 1"), ("code", "print(x)")]


def test_outputs_of_a_run(tmp_path):
    path = script(tmp_path, "# %%\nimport sys\nprint('argv', sys.argv[1:])\n"
                  "print('warn', file=sys.stderr)\n# %%\nx = 6 * 7\nx\n# %%\ny = None\ny\n")
    r = make(tmp_path, "--script", path, "--", "--extra")
    assert r.returncode == 0, r.stderr
    first, second, third = code_cells(tmp_path)
    assert first["execution_count"] == 1
    assert first["outputs"] == [
        {"output_type": "stream", "name": "stdout", "text": ["argv ['--check', '--extra']\n"]},
        {"output_type": "stream", "name": "stderr", "text": ["warn\n"]}]
    assert second["outputs"] == [{"output_type": "execute_result", "execution_count": 2,
                                  "data": {"text/plain": ["42"]}, "metadata": {}}]
    assert third["outputs"] == []  # a None value shows nothing, as in Jupyter


def test_open_figures_become_pngs(tmp_path):
    pytest.importorskip("matplotlib")
    path = script(tmp_path, "# %%\nimport matplotlib\nmatplotlib.use('Agg')\n"
                  "import matplotlib.pyplot as plt\nplt.plot([1, 2])\n"
                  "# %%\nprint(len(plt.get_fignums()))\n")
    r = make(tmp_path, "--script", path)
    assert r.returncode == 0, r.stderr
    plot, after = code_cells(tmp_path)
    figs = [o for o in plot["outputs"] if o["output_type"] == "display_data"]
    assert len(figs) == 1
    assert base64.b64decode(figs[0]["data"]["image/png"]).startswith(b"\x89PNG")
    assert after["outputs"][0]["text"] == ["0\n"]  # closed after its cell


@pytest.mark.parametrize("body, code", [
    ("# %%\nprint('skip')\nraise SystemExit(77)\n", 77),
    ("# %%\nraise SystemExit(1)\n", 1),
    ("# %%\nx = 1\n# %%\nundefined_name\n", 1),
])
def test_no_notebook_after_a_failed_run(tmp_path, body, code):
    r = make(tmp_path, "--script", script(tmp_path, body))
    assert r.returncode == code
    assert "no notebook written" in r.stderr
    assert not (tmp_path / "nb.ipynb").exists()


def test_no_run_and_compare(tmp_path):
    path = script(tmp_path, "# %%\nprint(1)\n")
    assert make(tmp_path, "--script", path, "--no-run").returncode == 0
    assert code_cells(tmp_path)[0]["outputs"] == []
    nb = str(tmp_path / "nb.ipynb")
    assert make(tmp_path, "--script", path, "--compare", nb).returncode == 0
    Path(path).write_text("# %%\nprint(2)\n")
    r = make(tmp_path, "--script", path, "--compare", nb)
    assert r.returncode == 1 and "cell 0 differs" in r.stderr


def test_committed_notebook_matches_the_script(tmp_path):
    r = make(tmp_path, "--compare", str(HERE / "threadhist.ipynb"))
    assert r.returncode == 0, r.stderr
