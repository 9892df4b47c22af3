# SPDX-License-Identifier: MIT
"""XLA's kernels instrumented on a GPU, in processes of their own (JAX
preallocates GPU memory and must find the stand-in ptxas before its first
compile): egpu.jax in the program, and `egpu attach` on the unmodified
program. Results are bit-identical to the plain run; per kernel, threads
that ran the probe == threads launched."""
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu

PROG = os.path.join(os.path.dirname(__file__), "jax_prog.py")


def have_jax():
    return subprocess.run([sys.executable, "-c", "import jax"],
                          capture_output=True).returncode == 0


def run(*args, prefix=()):
    p = subprocess.run([*prefix, sys.executable, PROG, *args],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


@pytest.fixture(scope="module")
def plain():
    if not have_jax():
        pytest.skip("JAX is not installed")
    return run("plain")[0]


def test_egpu_jax_instruments_xla_kernels(plain, launches_path):
    res, err = run("egpu", launches_path)
    print(json.dumps(res["stats"]), sorted(res["threads"]), file=sys.stderr)
    assert res["out"] == plain["out"], "results differ from the plain run"
    assert res["after"] == plain["out"]
    st = res["stats"]
    assert st["failed"] == 0, err[-4000:]
    assert st["instrumented"] >= 1
    assert res["threads"], "no instrumented kernel ran"
    for name, n in res["threads"].items():
        assert n > 0 and n == res["launched"][name], name
    # compiled plain after the block: no probe ran again
    assert res["threads_after"] == res["threads"]


def test_egpu_attach_instruments_xla_kernels(plain, launches_path, egpu_cli,
                                             tmp_path):
    report = tmp_path / "report.json"
    res, err = run("attach", prefix=(egpu_cli, "attach", "--json", "-o",
                                     str(report), launches_path, "--"))
    assert res["out"] == plain["out"]
    rep = json.loads(report.read_text())
    assert rep["ptxas_compiles"] >= 1, err[-4000:]
    assert rep["instrumented"] >= 1
    threads = {e["key"][0]: e["value"][0] for e in rep["maps"]["threads"]["entries"]}
    launched = {e["key"][0]: e["value"][0] for e in rep["maps"]["launched"]["entries"]}
    assert threads and threads == launched
