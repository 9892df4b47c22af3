# SPDX-License-Identifier: MIT
"""The frameworks launch their own kernels, instrumented by egpu.triton and
egpu.cupy: Triton's @triton.jit (a fused softmax, an autotuned matmul),
torch.compile (default and reduce-overhead), a CuPy raw kernel, and two
devices when there are two. Each checks that the results are bit-identical
to the plain run and that, per kernel name, threads entering == threads
leaving == threads launched (from Triton's launch hook, or the grid)."""
import collections
import time

import pytest

import egpu

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
import egpu.triton  # noqa: E402  (after the skips: needs Triton)


def new_probe(kcount_path, device=0):
    torch.cuda.set_device(device)
    torch.empty(1, device=f"cuda:{device}")  # the device's context current
    ctx = egpu.Context(sm="sm_%d%d" % torch.cuda.get_device_capability(device))
    obj = ctx.load(kcount_path)
    obj.attach_all()
    return obj


@pytest.fixture
def probe(kcount_path):
    obj = new_probe(kcount_path)
    yield obj
    torch.cuda.synchronize()
    obj._ctx.close()


class Launches:
    """Threads launched per kernel name, from Triton's launch-enter hook:
    grid x num_warps x 32 x num_ctas of every launch (autotuning's
    benchmark launches included)."""

    def __init__(self, monkeypatch):
        from triton import knobs
        from triton.compiler.compiler import CompiledKernel
        self.threads = collections.Counter()
        plain = CompiledKernel.launch_metadata

        def launch_metadata(kernel, grid, stream, *args):
            md = plain(kernel, grid, stream, *args)
            if md is not None:
                m, (x, y, z) = kernel.metadata, tuple(grid) + (1,) * (3 - len(grid))
                n = x * y * z * m.num_warps * 32 * m.num_ctas
                md.add(lambda: {"egpu_threads": n}, ())
            return md

        monkeypatch.setattr(CompiledKernel, "launch_metadata", launch_metadata)
        hooks = knobs.runtime.launch_enter_hook
        if hasattr(hooks, "add"):  # Triton 3.5+: a HookChain
            hooks.add(self._enter)
            self._undo = lambda: hooks.remove(self._enter)
        else:
            monkeypatch.setattr(knobs.runtime, "launch_enter_hook", self._enter)
            self._undo = lambda: None

    def _enter(self, metadata):
        md = metadata.get()
        self.threads[md["name"]] += md.get("egpu_threads", 0)

    def close(self):
        self._undo()


@pytest.fixture
def launches(monkeypatch):
    counter = Launches(monkeypatch)
    yield counter
    counter.close()


def counted(obj):
    torch.cuda.synchronize()
    return (obj.maps["entries"].by_kernel(), obj.maps["exits"].by_kernel())


def assert_counts(obj, expected):
    """entries == exits == expected threads, per kernel name."""
    entries, exits = counted(obj)
    ran = {k: v for k, v in entries.items() if v}
    assert ran == {k: v for k, v in expected.items() if v}, (ran, expected)
    assert {k: v for k, v in exits.items() if v} == ran


# -- Triton: a fused softmax (our own, one row per program) -------------

@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, in_stride, out_stride,
                 BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * in_stride + cols, mask=cols < n_cols,
                other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * out_stride + cols, e / tl.sum(e, axis=0),
             mask=cols < n_cols)


def softmax(x):
    y = torch.empty_like(x)
    block = triton.next_power_of_2(x.shape[1])
    softmax_rows[(x.shape[0],)](y, x, x.shape[1], x.stride(0), y.stride(0),
                                BLOCK=block, num_warps=4)
    return y


def test_triton_softmax(probe, launches):
    x = torch.randn(1823, 781, device="cuda")
    plain = softmax(x)
    with egpu.triton.instrument(probe) as inst:
        got = softmax(x)
        got2 = softmax(x)
    assert torch.equal(plain, got) and torch.equal(plain, got2)
    assert [k.name for _, k in inst.kernels] == ["softmax_rows"]
    assert launches.threads["softmax_rows"] == 3 * 1823 * 4 * 32
    # the plain launch was before the probe: only the two instrumented count
    assert_counts(probe, {"softmax_rows": 2 * 1823 * 4 * 32})
    # undone: plain again, and the probe sees nothing more
    softmax(x)
    assert_counts(probe, {"softmax_rows": 2 * 1823 * 4 * 32})


# -- Triton: an autotuned matmul (our own) -------------------------------

# One tile shape, so every configuration sums in the same order (results
# bit-identical whichever wins); warps and stages vary.
@triton.autotune(configs=[
    triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4, num_stages=3),
    triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=8, num_stages=2),
    triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4, num_stages=4),
], key=["M", "N", "K"])
@triton.jit
def matmul_tiles(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        x = tl.load(a + rm[:, None] * sam + kk[None, :] * sak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        y = tl.load(b + kk[:, None] * sbk + rn[None, :] * sbn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
    matmul_tiles[grid](a, b, c, M, N, K, a.stride(0), a.stride(1),
                       b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    return c


def test_triton_autotuned_matmul(probe, launches):
    a = torch.randn(512, 384, device="cuda", dtype=torch.float16)
    b = torch.randn(384, 640, device="cuda", dtype=torch.float16)
    plain = matmul(a, b)
    launches.threads.clear()
    matmul_tiles.cache.clear()  # autotune again, instrumented
    with egpu.triton.instrument(probe) as inst:
        got = matmul(a, b)
    assert torch.equal(plain, got)
    # every configuration was compiled through the hook and benchmarked
    assert len(inst.kernels) == 3
    assert {k.name for _, k in inst.kernels} == {"matmul_tiles"}
    assert launches.threads["matmul_tiles"] > 0
    assert_counts(probe, {"matmul_tiles": launches.threads["matmul_tiles"]})


# -- torch.compile --------------------------------------------------------

class Block(torch.nn.Module):
    """A small transformer block: attention, MLP, layer norms."""

    def __init__(self, d=256, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.up, self.down = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        att = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, -1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.down(torch.nn.functional.gelu(self.up(self.ln2(x))))


@pytest.fixture
def block():
    torch.manual_seed(0)
    model = Block().cuda().eval()
    x = torch.randn(4, 128, 256, device="cuda")
    import torch._inductor.config as cfg
    # Launches through Triton's launcher, so its hook sees them.
    with torch.no_grad(), cfg.patch(use_static_cuda_launcher=False):
        yield model, x


def test_torch_compile_default(probe, launches, block):
    model, x = block
    torch._dynamo.reset()
    plain = torch.compile(model)(x)
    with egpu.triton.instrument(probe) as inst:
        launches.threads.clear()
        compiled = torch.compile(model)
        got = compiled(x)
        got2 = compiled(x)
    assert torch.equal(plain, got) and torch.equal(plain, got2)
    names = {k.name for _, k in inst.kernels}
    assert names and all(n.startswith("triton_") for n in names)
    ms = sorted(inst.instrument_ms)
    print(f"\n[egpu] torch.compile: {len(ms)} kernels instrumented, "
          f"instrument_ms first {inst.instrument_ms[0]:.2f}, "
          f"median {ms[len(ms) // 2]:.2f}, max {ms[-1]:.2f}")
    assert set(launches.threads) <= names
    assert_counts(probe, dict(launches.threads))


def test_torch_compile_reduce_overhead(probe, launches, block):
    model, x = block
    torch._dynamo.reset()
    plain = torch.compile(model, mode="reduce-overhead")(x).clone()
    with egpu.triton.instrument(probe):
        compiled = torch.compile(model, mode="reduce-overhead")
        launches.threads.clear()
        first = compiled(x).clone()  # warm-up: runs the kernels eagerly
        per_call = dict(launches.threads)
        for _ in range(3):  # recording, then CUDA graph replays
            compiled(x)
        before, _ = counted(probe)
        replays = 5
        for _ in range(replays):
            got = compiled(x).clone()
        entries, exits = counted(probe)
    assert torch.equal(plain, first) and torch.equal(plain, got)
    assert per_call
    for name, threads in per_call.items():
        assert entries[name] - before[name] == replays * threads, name
        assert exits[name] == entries[name], name


# -- CuPy -----------------------------------------------------------------

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}
"""


def test_cupy_raw_kernel(probe):
    cp = pytest.importorskip("cupy")
    import egpu.cupy
    n, block = 100003, 256
    grid = (n + block - 1) // block
    x = cp.arange(n, dtype=cp.float32) / 7
    args = lambda y: (cp.float32(2.5), x, y, cp.int32(n))
    plain_y = cp.ones(n, dtype=cp.float32)
    cp.RawKernel(SAXPY, "saxpy")((grid,), (block,), args(plain_y))
    y = cp.ones(n, dtype=cp.float32)
    egpu.cupy.raw_kernel(probe._ctx, SAXPY, "saxpy")((grid,), (block,), args(y))
    cp.cuda.Device().synchronize()
    assert bool((plain_y == y).all())
    assert_counts(probe, {"saxpy": grid * block})


# -- two devices ------------------------------------------------------------

def test_two_devices(kcount_path, launches):
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU: the two-device case needs two")
    obj = new_probe(kcount_path, 0)
    xs = [torch.randn(513, 300, device=f"cuda:{d}") for d in (0, 1)]
    plain = []
    for d, x in enumerate(xs):
        # Triton launches on the current device, not the tensor's
        with torch.cuda.device(d):
            plain.append(softmax(x))
    with egpu.triton.instrument(obj) as inst:
        got = []
        for d, x in enumerate(xs):
            with torch.cuda.device(d):
                got.append(softmax(x))
    for p, g in zip(plain, got):
        assert torch.equal(p, g)
    assert set(inst.objects) == {0, 1}
    for d in (0, 1):
        torch.cuda.synchronize(d)
        entries = inst.objects[d].maps["entries"].by_kernel()
        assert entries == {"softmax_rows": 513 * 4 * 32}, (d, entries)
    inst.close()
    obj._ctx.close()


# -- cost -------------------------------------------------------------------

def test_instrumentation_time_per_kernel(probe):
    """Not a bound: prints libegpu's CPU time per Triton kernel
    (docs/benchmarks.md): the first translates the probes, the others
    reuse the translation."""
    x = torch.randn(64, 1000, device="cuda")
    with egpu.triton.instrument(probe) as inst:
        for block in (1024, 2048, 4096, 8192):
            softmax_rows[(64,)](torch.empty_like(x), x, 1000, x.stride(0),
                                x.stride(0), BLOCK=block)
    assert len(inst.instrument_ms) == 4
    print("\n[egpu] instrument_ms per Triton kernel: " +
          ", ".join(f"{t:.2f}" for t in inst.instrument_ms))
