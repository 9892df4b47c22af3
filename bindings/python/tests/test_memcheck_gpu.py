# SPDX-License-Identifier: MIT
"""egpu.memcheck.Checker on a GPU (docs/memcheck.md, "In-process"): a
small torch.compile'd model trained a few steps under it must give no
report while its Triton kernels are checked, so must a kernel reading
libdevice's tables (module variables Triton loads itself), and a Triton
kernel whose load lacks its mask must be reported on that line. Each prints one
summary line to the real stderr (ctest -V shows it)."""
import ctypes
import sys

import pytest

import egpu

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
from triton.language.extra import libdevice  # noqa: E402
import egpu.memcheck  # noqa: E402  (after the skips: needs Triton)


def say(line):
    sys.__stderr__.write(f"test_memcheck_gpu: {line}\n")
    sys.__stderr__.flush()


def test_compiled_model_is_clean():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.LayerNorm(512),
        torch.nn.Linear(512, 64)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(96, 256, device="cuda")
    target = torch.randint(0, 64, (96,), device="cuda")

    def loss_of(x):
        p = torch.softmax(model(x), dim=-1)
        return -torch.log(p.gather(1, target[:, None]) + 1e-6).mean()

    step = torch.compile(loss_of)
    with egpu.memcheck.Checker(raise_errors=False) as mc:
        for _ in range(4):
            opt.zero_grad()
            loss = step(x)
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
    say(f"compiled model: {mc.kernels} Triton kernels checked, "
        f"{mc.launches} launches, {mc.errors} errors")
    assert mc.errors == 0, mc.text
    assert mc.reports == []
    assert mc.kernels > 0 and mc.launches > 0
    assert torch.isfinite(loss).item()


@triton.jit
def precise_sin(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y + offs, libdevice.sin(tl.load(x + offs, mask=mask)), mask=mask)


def test_module_variables_are_tracked():
    """libdevice's sin reduces large arguments with a table in the
    module's global memory, which Triton loads: not a bad access."""
    x = torch.linspace(-1e6, 1e6, 5000, device="cuda")
    y = torch.empty_like(x)
    with egpu.memcheck.Checker(raise_errors=False) as mc:
        precise_sin[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        torch.cuda.synchronize()
    say(f"libdevice sin: {mc.kernels} kernels, {mc.errors} errors")
    assert mc.errors == 0, mc.text
    assert mc.kernels > 0 and mc.launches == 1
    assert torch.allclose(y, torch.sin(x), atol=1e-3)


@triton.jit
def copy_nomask(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs)  # BUG:nomask
    tl.store(y + offs, v, mask=offs < n)


class Raw:
    """Device memory PyTorch's allocator does not know, as a tensor can
    take it (__cuda_array_interface__)."""

    def __init__(self, ptr, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4",
                                         "data": (ptr, False), "version": 2}


def bug_line():
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1)
                    if line.rstrip().endswith("# BUG:nomask"))


def test_missing_mask_is_reported():
    n, block = 1000, 256
    torch.empty(1, device="cuda")  # torch's context current here
    cuda = ctypes.CDLL("libcuda.so.1")
    ptr = ctypes.c_uint64()
    # 1 MiB, of which the first n floats are the tensor: the load past
    # them reads memory that exists (no fault) but is not the tensor's
    assert cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(1 << 20)) == 0
    try:
        assert cuda.cuMemsetD8_v2(ptr, ctypes.c_ubyte(0), ctypes.c_size_t(1 << 20)) == 0
        x = torch.as_tensor(Raw(ptr.value, n), device="cuda")
        assert x.data_ptr() == ptr.value
        y = torch.empty(n, device="cuda")
        with pytest.raises(egpu.memcheck.Violations) as caught:
            with egpu.memcheck.Checker() as mc:
                mc.track(ptr.value, n * 4)
                copy_nomask[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
                torch.cuda.synchronize()
        assert torch.equal(y, x)
    finally:
        torch.cuda.synchronize()
        cuda.cuMemFree_v2(ptr)
    say(f"missing mask: {mc.text.strip()}")
    # one site, or one per load instruction Triton split the load into
    assert caught.value.reports == mc.reports and mc.reports
    for r in mc.reports:
        assert r["kernel"] == "copy_nomask"
        assert r["file"].endswith("test_memcheck_gpu.py") and r["line"] == bug_line()
        assert (r["kind"], r["space"]) == ("load", "global")
        assert "past the end of a 4,000-byte cudaMalloc allocation" in r["where"]
        assert n * 4 <= r["address"] - ptr.value < 1024 * 4
    assert 0 < mc.errors == sum(r["count"] for r in mc.reports) <= 24
    assert "egpu memcheck:" in str(caught.value)
