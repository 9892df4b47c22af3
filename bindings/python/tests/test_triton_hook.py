# SPDX-License-Identifier: MIT
"""egpu.triton's hook against a stand-in for Triton's knobs (no GPU, no
Triton): the cache key, the ptx stage, undoing, version errors."""
import sys
import types
import weakref

import pytest

import egpu


def fake_triton(monkeypatch, version="3.6.0", device=0):
    knobs = types.SimpleNamespace(
        runtime=types.SimpleNamespace(add_stages_inspection_hook=None),
        cache=types.SimpleNamespace(dir="/user/cache"),
        compilation=types.SimpleNamespace(always_compile=False))
    driver = types.SimpleNamespace(active=types.SimpleNamespace(
        get_current_device=lambda: device))
    mod = types.ModuleType("triton")
    mod.__version__ = version
    mod.knobs = knobs
    class JITFunction:
        def __init__(self):
            self.device_caches = {0: "compiled"}

    mod.runtime = types.SimpleNamespace(driver=driver, JITFunction=JITFunction)
    monkeypatch.setitem(sys.modules, "triton", mod)
    return knobs


class Gone:
    pass


def test_hook_instruments_the_ptx_stage(monkeypatch, kcount_path, kernels_ptx):
    import egpu.triton
    knobs = fake_triton(monkeypatch)
    ctx = egpu.Context(offline=True)
    obj = ctx.load(kcount_path)
    obj.attach_all()
    jit_fn = sys.modules["triton"].runtime.JITFunction()
    # a dead weak proxy on the heap (isinstance on it raises ReferenceError)
    dead = [weakref.proxy(Gone())]
    with egpu.triton.instrument(obj) as inst:
        assert jit_fn.device_caches == {}  # compiled plain: not reused
        jit_fn.device_caches[0] = "instrumented"
        hook = knobs.runtime.add_stages_inspection_hook
        key, digest = hook()
        assert key.startswith("egpu-") and len(digest) == 64
        assert knobs.cache.dir != "/user/cache"
        stages = {"ttir": None, "ptx": lambda src, md: kernels_ptx}
        assert hook(None, stages, None, None, 90) is None
        out = stages["ptx"]("llir", {})
        assert out != kernels_ptx and "count_entry" in out
        assert [k.kernel_id for _, k in inst.kernels] == [0, 1]
        with pytest.raises(egpu.Busy):
            egpu.triton.instrument(obj)
        # a second session's key differs: no cache hands its binaries back
    assert jit_fn.device_caches == {}  # compiled instrumented: not reused
    assert len(dead) == 1
    again = egpu.triton.instrument(obj)
    assert again._hook()[0] != key
    assert knobs.compilation.always_compile  # no binary from the disk cache
    again.undo()
    assert knobs.runtime.add_stages_inspection_hook is None
    assert knobs.cache.dir == "/user/cache"
    assert not knobs.compilation.always_compile
    # nothing ran: both kernels read 0 (array maps have every entry)
    assert inst.by_kernel("entries") == {"add_one": 0,
                                         "scale(float*, float, int)": 0}
    ctx.close()


def test_other_devices_get_their_own_context(monkeypatch, kcount_path, kernels_ptx):
    import egpu.triton
    knobs = fake_triton(monkeypatch)
    ctx = egpu.Context(offline=True)
    obj = ctx.load(kcount_path)
    obj.attach_all()
    inst = egpu.triton.instrument(obj)
    stages = {"ptx": lambda src, md: kernels_ptx}
    hook = knobs.runtime.add_stages_inspection_hook
    hook(None, stages, None, None, 90)
    key0 = hook()
    sys.modules["triton"].runtime.driver.active.get_current_device = lambda: 1
    # a binary of device 0 carries its map addresses: never device 1's
    assert hook() != key0
    stages["ptx"]("llir", {})
    assert set(inst.objects) == {0, 1} and inst.objects[1] is not obj
    assert inst.objects[1]._ctx is not ctx
    inst.close()
    ctx.close()


def test_old_triton_is_refused_by_version(monkeypatch, kcount_path):
    import egpu.triton
    fake_triton(monkeypatch, version="3.2.0")
    with egpu.Context(offline=True) as ctx:
        with pytest.raises(egpu.NotSupported, match="Triton 3.2.0"):
            egpu.triton.instrument(ctx.load(kcount_path))


class HookChain:
    """Triton 3.5+'s launch hook knob: hooks added and removed."""

    def __init__(self):
        self.calls = []

    def add(self, fn):
        self.calls.append(fn)

    def remove(self, fn):
        self.calls.remove(fn)


def test_bare_context_and_launch_hook(monkeypatch, kernels_ptx):
    """A context without programs instruments (egpu.memcheck.Checker's
    way), and on_launch joins the single launch hook of older Tritons,
    the one already there still called; undo puts it back."""
    import egpu.triton
    knobs = fake_triton(monkeypatch)
    theirs, seen = [], []
    knobs.runtime.launch_enter_hook = theirs.append
    with egpu.Context(offline=True) as ctx:
        inst = egpu.triton.instrument(ctx, on_launch=seen.append)
        knobs.runtime.launch_enter_hook("md")
        assert seen == ["md"] and theirs == ["md"]
        stages = {"ptx": lambda src, md: kernels_ptx}
        knobs.runtime.add_stages_inspection_hook(None, stages, None, None, 90)
        assert stages["ptx"]("llir", {}) == kernels_ptx  # nothing to splice
        assert [k.name for _, k in inst.kernels] == ["add_one", "_Z5scalePffi"]
        assert inst.ptx == {"add_one": [kernels_ptx], "_Z5scalePffi": [kernels_ptx]}
        with pytest.raises(egpu.NotSupported, match="no maps"):
            inst.by_kernel("counts")
        sys.modules["triton"].runtime.driver.active.get_current_device = lambda: 1
        with pytest.raises(egpu.NotSupported, match="device 1"):
            stages["ptx"]("llir", {})
        inst.undo()
    assert knobs.runtime.launch_enter_hook == theirs.append


def test_launch_hook_chain(monkeypatch):
    import egpu.triton
    knobs = fake_triton(monkeypatch)
    knobs.runtime.launch_enter_hook = chain = HookChain()
    with egpu.Context(offline=True) as ctx:
        with egpu.triton.instrument(ctx, on_launch=print):
            assert chain.calls == [print]
        assert chain.calls == []
