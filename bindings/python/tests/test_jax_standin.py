# SPDX-License-Identifier: MIT
"""egpu.jax without a GPU or JAX: a stand-in for JAX's config and caches,
and ptxas run the way XLA runs it (found on PATH, PTX in a temporary file
without a suffix). The "real" ptxas is a script keeping what it was given."""
import os
import shutil
import subprocess
import sys
import types

import pytest

import egpu


def fake_jax(monkeypatch):
    calls = []

    class Config:
        jax_enable_compilation_cache = True

        def update(self, name, value):
            calls.append((name, value))
            setattr(self, name, value)

    mod = types.ModuleType("jax")
    mod.config = Config()
    mod.clear_caches = lambda: calls.append("clear_caches")
    monkeypatch.setitem(sys.modules, "jax", mod)
    return mod, calls


def run_like_xla(tmp_path, ptx, arch="sm_90a"):
    """ptxas as XLA runs it; returns what the real ptxas was given."""
    src = tmp_path / "tempfile-vm-1"
    src.write_text(ptx)
    given = tmp_path / "given.ptx"
    real = tmp_path / "real-ptxas"
    real.write_text(f"#!/bin/sh\ncp \"$1\" '{given}'\n")
    real.chmod(0o755)
    env = dict(os.environ, EGPU_PTXAS_REAL=str(real))
    rc = subprocess.run([shutil.which("ptxas"), str(src), "-o", str(tmp_path / "out"),
                         f"-arch={arch}", "--warn-on-spills"], env=env).returncode
    assert rc == 0
    return given.read_text()


def test_standin_is_the_ptxas_on_path():
    import egpu.jax
    assert egpu.jax._not_installed is None, egpu.jax._not_installed
    first = os.environ["PATH"].split(os.pathsep)[0]
    assert first == egpu._c.egpu_ptxas_standin_dir()
    assert shutil.which("ptxas") == os.path.join(first, "ptxas")
    assert os.path.basename(os.environ["EGPU_PTXAS_REAL"]) == "ptxas"


def test_instrumented_inside_plain_outside(monkeypatch, tmp_path, kcount_path,
                                           kernels_ptx):
    import egpu.jax
    jax, calls = fake_jax(monkeypatch)
    ctx = egpu.Context(offline=True)
    obj = ctx.load(kcount_path)
    obj.attach_all()
    assert run_like_xla(tmp_path, kernels_ptx) == kernels_ptx
    with egpu.jax.instrument(obj) as inst:
        assert calls == [("jax_enable_compilation_cache", False), "clear_caches"]
        out = run_like_xla(tmp_path, kernels_ptx)
        assert out != kernels_ptx and "count_entry" in out
        # another GPU's compile is left as it is
        assert run_like_xla(tmp_path, kernels_ptx, "sm_80") == kernels_ptx
        with pytest.raises(egpu.Busy):
            egpu.jax.instrument(obj)
        assert inst.live_stats()["requests"] == 2
    assert "EGPU_PTXAS_SOCKET" not in os.environ
    assert calls[-2:] == ["clear_caches", ("jax_enable_compilation_cache", True)]
    assert inst.stats["instrumented"] == 1 and inst.stats["declined"] == 1
    assert run_like_xla(tmp_path, kernels_ptx) == kernels_ptx
    ctx.close()


def test_jax_missing_is_not_supported(monkeypatch, kcount_path):
    import egpu.jax
    monkeypatch.setitem(sys.modules, "jax", None)
    ctx = egpu.Context(offline=True)
    with pytest.raises(egpu.NotSupported, match="JAX is not importable"):
        egpu.jax.instrument(ctx.load(kcount_path))
    ctx.close()
