# SPDX-License-Identifier: MIT
"""On a GPU: Python helpers called by entry probes
(tests/helpers/gpu_helpers.bpf.c) in kernels launched by CuPy, made on the
context's dispatcher thread or in helper_poll(): each call once, in order
per GPU thread."""

import ctypes
from typing import Annotated

import pytest

import egpu

pytestmark = pytest.mark.gpu

GRID, BLOCK = 16, 256
THREADS = GRID * BLOCK


class Calls:
    """What the helpers saw; checks each thread's calls come in order."""

    def __init__(self):
        self.next_k = [0] * THREADS
        self.count = 0
        self.wrong = 0

    def seq(self, t: int, k: int) -> int:
        self.count += 1
        self.wrong += self.next_k[t] != k
        self.next_k[t] = k + 1
        return 0

    def buf(self, b: Annotated[bytes, 16]) -> int:
        t, inv = int.from_bytes(b[:8], "little"), int.from_bytes(b[8:], "little")
        self.count += 1
        self.wrong += inv != t ^ (2**64 - 1) or self.next_k[t] != 2
        return 0

    def other(self, x: int) -> int:
        return 0


def launch(ctx, ptx, calls):
    cp = pytest.importorskip("cupy")
    cp.cuda.Device(0).use()
    mod = ctx.module_load(ptx)
    func = cp.cuda.driver.moduleGetFunction(mod, "ordered")
    out = cp.zeros(THREADS, dtype=cp.float32)
    ptr = ctypes.c_void_p(out.data.ptr)
    params = (ctypes.c_void_p * 1)(ctypes.addressof(ptr))
    cp.cuda.driver.launchKernel(func, GRID, 1, 1, BLOCK, 1, 1, 0, 0,
                                ctypes.addressof(params), 0)
    cp.cuda.Device(0).synchronize()
    return mod


@pytest.mark.parametrize("thread", [True, False], ids=["dispatcher", "poll"])
def test_gpu_calls_reach_python_once_in_order(gpu_uhelpers_path, helper_kernels_ptx, thread):
    calls = Calls()
    with egpu.Context() as ctx:
        ctx.register_helper(0x10000, calls.seq)
        ctx.register_helper(0x10001, calls.buf)
        ctx.register_helper(0x10002, calls.other, name="on_warp")
        ctx.register_helper(0x10003, calls.other, name="on_flood")
        ctx.load(gpu_uhelpers_path).attach_all()
        ctx.helper_dispatch(thread)
        mod = launch(ctx, helper_kernels_ptx, calls)
        for _ in range(1000):
            if calls.count >= 4 * THREADS:
                break
            ctx.helper_poll(0.01)  # beside the thread, or alone
        assert ctx.helper_poll(0) == 0
        assert ctx.helper_drops == 0
        pytest.importorskip("cupy").cuda.driver.moduleUnload(mod)
    assert calls.count == 4 * THREADS and calls.wrong == 0
    assert calls.next_k == [3] * THREADS
