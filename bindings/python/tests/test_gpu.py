# SPDX-License-Identifier: MIT
"""On a GPU: probes (memory probes too) in kernels launched by CuPy, direct
GPU runs, the clock calibration. Skipped (by conftest.py) where no GPU is
usable; CuPy is imported inside."""

import ctypes
import time

import pytest

import egpu

pytestmark = pytest.mark.gpu

THREADS, BLOCK = 1024, 256


@pytest.fixture
def gpu_obj(probes_path):
    with egpu.Context(thread_slots=4096) as ctx:
        obj = ctx.load(probes_path)
        obj.attach_all()
        yield ctx, obj


def check_counts(obj, x, n):
    cp = pytest.importorskip("cupy")
    assert bool((x[:n] == 1).all()) and bool((x[n:] == 0).all())
    slots = obj.maps["slots"]
    assert (slots[0], slots[1]) == (THREADS, THREADS)
    per_thread = obj.maps["per_thread"]
    assert per_thread.values_per_key == 4096
    assert per_thread.sum(0) == THREADS
    assert int(cp.asnumpy(per_thread[0]).max()) == 1
    per_sm = obj.maps["per_sm"]  # seen as a per-thread map: a value per SM
    n_sm = per_sm.values_per_key
    assert per_sm.per_thread and n_sm >= 2 and n_sm & (n_sm - 1) == 0
    assert per_sm.sum(0) == THREADS
    assert int(cp.asnumpy(per_sm[0]).sum()) == THREADS


def loaded_add_one(ctx, kernels_ptx, n):
    """add_one of ``kernels_ptx`` loaded by ctx.module_load and run on
    THREADS threads over n floats of THREADS zeros: (x, n)."""
    cp = pytest.importorskip("cupy")
    mod = ctx.module_load(kernels_ptx)
    func = cp.cuda.driver.moduleGetFunction(mod, "add_one")
    x = cp.zeros(THREADS, dtype=cp.float32)
    ptr, count = ctypes.c_void_p(x.data.ptr), ctypes.c_int(n)
    params = (ctypes.c_void_p * 2)(ctypes.addressof(ptr), ctypes.addressof(count))
    cp.cuda.driver.launchKernel(func, THREADS // BLOCK, 1, 1, BLOCK, 1, 1, 0, 0,
                                ctypes.addressof(params), 0)
    cp.cuda.Device(0).synchronize()
    cp.cuda.driver.moduleUnload(mod)
    return x, n


def test_cupy_raw_module_runs_instrumented_ptx(gpu_obj, kernels_ptx, tmp_path):
    cp = pytest.importorskip("cupy")
    ctx, obj = gpu_obj
    cp.cuda.Device(0).use()  # the CUDA context egpu binds the maps in
    out, report = ctx.instrument(kernels_ptx)
    assert report.kernels_patched == 1
    path = tmp_path / "instrumented.ptx"
    path.write_text(out)
    add_one = cp.RawModule(path=str(path)).get_function("add_one")
    x = cp.zeros(THREADS + 24, dtype=cp.float32)
    n = THREADS - 24
    add_one((THREADS // BLOCK,), (BLOCK,), (x, cp.int32(n)))
    cp.cuda.Device(0).synchronize()
    check_counts(obj, x, n)


def test_module_load_gives_a_cuda_module(gpu_obj, kernels_ptx):
    cp = pytest.importorskip("cupy")
    ctx, obj = gpu_obj
    cp.cuda.Device(0).use()
    x, n = loaded_add_one(ctx, kernels_ptx, THREADS - 1)
    check_counts(obj, x, n)


def test_direct_gpu_run_matches_cpu(probes_path):
    with egpu.Context() as ctx:
        obj = ctx.load(probes_path)
        bump = obj.programs["bump"]
        mem = bytearray(b"\x02\x00")
        assert bump.run(mem, backend="cpu") == 103
        assert bump.run(mem, backend="gpu") == 106  # maps move to the GPU
        assert mem == bytearray(b"\x02\x2a")  # copied back after the run
        assert obj.maps["counts"][2] == 6


def test_memory_probe_counts_the_accesses(mem_path, kernels_ptx, tmp_path):
    cp = pytest.importorskip("cupy")
    cp.cuda.Device(0).use()
    with egpu.Context() as ctx:
        obj = ctx.load(mem_path)
        obj.programs["count_mem"].attach(spaces="global", kinds=("load", "store"))
        out, report = ctx.instrument(kernels_ptx)
        assert [(s.kind, s.space) for s in report.mem_sites] == [
            ("load", "global"), ("store", "global")]
        path = tmp_path / "mem.ptx"
        path.write_text(out)
        add_one = cp.RawModule(path=str(path)).get_function("add_one")
        x = cp.zeros(THREADS, dtype=cp.float32)
        n = THREADS - 24
        add_one((THREADS // BLOCK,), (BLOCK,), (x, cp.int32(n)))
        cp.cuda.Device(0).synchronize()
        assert int((x == 1).sum()) == n
        counts = obj.maps["mem_counts"]

        def count(kind, space):
            return counts[egpu.MEM_KINDS[kind] * 8 + egpu.MEM_SPACES[space]]

        assert (count("load", "global"), count("store", "global")) == (n, n)
        assert count("load", "param") == 0  # not selected
        assert sum(v for _, v in counts.items()) == 2 * n


def test_clock_calibration():
    with egpu.Context() as ctx:
        before = time.monotonic_ns()
        clk = ctx.clock_sync()
        assert 0 < clk.error_ns < 10_000 and clk.rounds > 0
        assert clk.round_trip_ns > 0 and clk.step_ns > 0
        assert before <= clk.host_ns <= time.monotonic_ns()
        assert clk.gpu_to_host(clk.host_ns + clk.offset_ns) == clk.host_ns
        assert ctx.clock() == clk


def test_mem_trace_every_address(events_path, kernels_ptx):
    """The splicer's trace mode from Python, end to end (Context.mem_trace,
    module_load, RingBuffer chunks, decode_spans): every global load and
    store of add_one arrives once, at the address its thread used, the
    load before the store."""
    np = pytest.importorskip("numpy")
    cp = pytest.importorskip("cupy")
    cp.cuda.Device(0).use()
    with egpu.Context() as ctx:
        obj = ctx.load(events_path)
        ctx.mem_trace(obj.maps["events"])
        x, n = loaded_add_one(ctx, kernels_ptx, THREADS - 24)
        assert int((x == 1).sum()) == n
        rb = egpu.RingBuffer(obj.maps["events"], chunks=True)
        acc = np.concatenate([egpu.decode_spans(c) for c in rb.read()])
        rb.close()
    thread = acc["block"].astype(np.int64) * BLOCK + acc["warp"] * 32 + acc["lane"]
    assert (acc["addr"] == x.data.ptr + 4 * thread).all()
    assert (acc["size"] == 4).all()
    for kind in ("load", "store"):
        mine = np.sort(thread[acc["kind"] == egpu.MEM_KINDS[kind]])
        assert (mine == np.arange(n)).all(), kind
    order = np.lexsort((np.arange(len(acc)), thread))  # each thread's, in arrival order
    kinds = acc["kind"][order].reshape(n, 2)
    assert (kinds[:, 0] == egpu.MEM_KINDS["load"]).all()
    assert (kinds[:, 1] == egpu.MEM_KINDS["store"]).all()
