#!/usr/bin/env python3
"""Instrument kernels made by the frameworks themselves, on the GPU:
Triton (vector add, softmax, layer norm, a wgmma matmul for sm_90a) and a
CuPy RawModule (NVRTC). For each: instrument its PTX with entry, exit and
memory-access counting probes, load it, run it, and check that the results
are bit-identical to the framework's own run, that every launched thread
was counted once at entry and once at exit, and that loads and stores were
counted.

Usage: test_frameworks.py LIBEGPU.so COUNT.bpf.o
       test_frameworks.py LIBEGPU.so COUNT.bpf.o --bench PROBE.bpf.o...
Prints 'N passed, N failed'; exits 77 (skipped) without a GPU, CuPy, PyTorch
or Triton. With --bench, prints the device-time ratios of the Triton matmul
with each probe instead (docs/benchmarks.md)."""
import os
import re
import sys
import tempfile

from egpu_ctypes import Egpu, Probe

try:
    import cupy as cp
    import torch
    import triton
    import triton.language as tl
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(77)

if not torch.cuda.is_available():
    print("skipped: no GPU")
    sys.exit(77)

PARAM_RE = re.compile(r"\.param\s+\.(\w+)")


def entry_params(ptx, name):
    """Types of the parameters of .entry NAME, in order."""
    start = ptx.index(".entry %s(" % name)
    return PARAM_RE.findall(ptx[start:ptx.index(")", start)])


def cupy_args(types, values):
    """Launch arguments for CuPy; parameters past @values (Triton's scratch
    pointers) get 0."""
    conv = {"u64": cp.uint64, "s64": cp.int64, "u32": cp.uint32,
            "s32": cp.int32, "f32": cp.float32, "b64": cp.uint64,
            "b32": cp.uint32}
    out = []
    for i, t in enumerate(types):
        v = values[i] if i < len(values) else 0
        if isinstance(v, torch.Tensor):
            v = v.data_ptr()
        out.append(conv[t](v))
    return tuple(out)


def load_ptx(ptx, tmp, tag):
    path = os.path.join(tmp, tag + ".ptx")
    with open(path, "w") as f:
        f.write(ptx)
    return cp.RawModule(path=path)


@triton.jit(do_not_specialize=["n"])
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask),
             mask=mask)


@triton.jit(do_not_specialize=["stride", "n_cols"])
def softmax_kernel(out, inp, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(inp + row * stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out + row * stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit(do_not_specialize=["stride", "n", "eps"])
def layer_norm_kernel(X, Y, W, B, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n
    xc = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / n + eps)
    w = tl.load(W + cols, mask=mask)
    b = tl.load(B + cols, mask=mask)
    tl.store(Y + row * stride + cols, xc * rstd * w + b, mask=mask)


@triton.jit(do_not_specialize=["M", "N", "K", "sam", "sak", "sbk", "sbn", "scm", "scn"])
def matmul_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    ap = a + rm[:, None] * sam + rk[None, :] * sak
    bp = b + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        acc += tl.dot(tl.load(ap), tl.load(bp))
        ap += BK * sak
        bp += BK * sbk
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16))


def triton_cases():
    """(name, run(out) -> CompiledKernel, args with out, out, grid, needs)"""
    g = torch.Generator(device="cuda").manual_seed(1)
    n = 1 << 20
    x = torch.rand(n, device="cuda", generator=g)
    y = torch.rand(n, device="cuda", generator=g)
    rows, cols = 1024, 781
    s_in = torch.randn(rows, cols, device="cuda", generator=g)
    w = torch.rand(cols, device="cuda", generator=g)
    bias = torch.rand(cols, device="cuda", generator=g)
    M = N = K = 1024
    a = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=g)
    bm = torch.randn(K, N, device="cuda", dtype=torch.float16, generator=g)

    def add(out):
        grid = (n // 1024,)
        return grid, [x, y, out, n], add_kernel[grid](x, y, out, n, BLOCK=1024)

    def softmax(out):
        grid = (rows,)
        args = [out, s_in, s_in.stride(0), cols]
        return grid, args, softmax_kernel[grid](*args, BLOCK=1024)

    def layer_norm(out):
        grid = (rows,)
        args = [s_in, out, w, bias, s_in.stride(0), cols, 1e-5]
        return grid, args, layer_norm_kernel[grid](*args, BLOCK=1024)

    def matmul(out):
        grid = (M // 128, N // 128)
        args = [a, bm, out, M, N, K, a.stride(0), a.stride(1), bm.stride(0),
                bm.stride(1), out.stride(0), out.stride(1)]
        return grid, args, matmul_kernel[grid](*args, BM=128, BN=128, BK=64,
                                               num_warps=8, num_stages=3)

    return [("triton vector add", add, torch.empty_like(x), None),
            ("triton softmax", softmax, torch.empty_like(s_in), None),
            ("triton layer norm", layer_norm, torch.empty_like(s_in), None),
            ("triton matmul (wgmma)", matmul,
             torch.empty(M, N, device="cuda", dtype=torch.float16), "wgmma")]


def launch_ptx(probe, tmp, tag, ptx, ck, grid, args, out):
    """Run the kernel of @ptx as Triton would launch @ck; returns @out.
    Each module gets its own file: CuPy caches modules by path."""
    kname = ck.name if hasattr(ck, "name") else ck.metadata.name
    fn = load_ptx(ptx, tmp, "%s_%s" % (kname, tag)).get_function(kname)
    shared = ck.metadata.shared
    if shared > 48 * 1024:
        fn.max_dynamic_shared_size_bytes = shared
    gridxyz = tuple(grid) + (1,) * (3 - len(grid))
    out.zero_()
    fn(gridxyz, (ck.metadata.num_warps * 32, 1, 1),
       cupy_args(entry_params(ptx, kname), args), shared_mem=shared)
    cp.cuda.Device().synchronize()
    return out.clone()


def run_triton_case(probe, tmp, name, run, out, needs):
    grid, args, ck = run(out)
    torch.cuda.synchronize()
    ref = out.clone()
    ptx = ck.asm["ptx"]
    if needs and needs not in ptx:
        return "its PTX has no %s" % needs
    inst, rep = probe.instrument(ptx)
    if rep.kernels_patched != 1:
        return "report: %d kernels patched" % rep.kernels_patched
    plain = launch_ptx(probe, tmp, "plain", ptx, ck, grid, args, out)
    if not torch.equal(plain, ref):
        return "this test's launch of Triton's own PTX differs from Triton's run"
    probe.reset("counts", range(COUNTERS))
    got = launch_ptx(probe, tmp, "inst", inst, ck, grid, args, out)
    if not torch.equal(got, ref):
        bad = (got != ref).sum().item()
        return "instrumented results differ in %d of %d elements" % (bad, ref.numel())
    threads = ck.metadata.num_warps * 32
    for d in grid:
        threads *= d
    counts = (probe.u64("counts", 0), probe.u64("counts", 1))
    if counts != (threads, threads):
        return "counted %d entries, %d exits; %d threads launched" % (counts + (threads,))
    return accesses_seen(probe)


COUNTERS = 2 + 4 + 1  # entries, exits, then accesses by egpu_mem_ctx.kind


def accesses_seen(probe):
    """None if the memory probe counted loads and stores, else why not."""
    loads, stores = probe.u64("counts", 2 + 1), probe.u64("counts", 2 + 2)
    if not loads or not stores:
        return "memory probe counted %d loads, %d stores" % (loads, stores)
    return None


CUPY_SRC = r"""
template <typename T>
__device__ T twice(T v) { return v + v; }

extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    y[i] = a * x[i] + twice(y[i]);
}
"""


def run_cupy_case(probe, tmp):
    from cupy_backends.cuda.libs import nvrtc
    prog = nvrtc.createProgram(CUPY_SRC, "saxpy.cu", [], [])
    nvrtc.compileProgram(prog, ["-arch=compute_90"])
    ptx = nvrtc.getPTX(prog)
    ptx = ptx.decode() if isinstance(ptx, bytes) else ptx
    ptx = ptx.rstrip("\0")
    n, block = 100000, 256
    grid = (n + block - 1) // block
    x = cp.arange(n, dtype=cp.float32)
    outs = []
    inst, rep = probe.instrument(ptx)
    probe.reset("counts", range(COUNTERS))
    for tag, text in (("orig", ptx), ("inst", inst)):
        y = cp.ones(n, dtype=cp.float32)
        fn = load_ptx(text, tmp, "cupy_" + tag).get_function("saxpy")
        fn((grid,), (block,), (cp.float32(2.0), x, y, cp.int32(n)))
        outs.append(y)
    cp.cuda.Device().synchronize()
    if not bool((outs[0] == outs[1]).all()):
        return "results differ"
    got = (probe.u64("counts", 0), probe.u64("counts", 1))
    if got != (grid * block, grid * block):
        return "counted %d entries, %d exits; %d threads" % (got + (grid * block,))
    return accesses_seen(probe)


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def bench_triton_matmul(egpu, probe_paths, tmp, runs=20):
    """Device time of the Triton matmul with each probe over without, both
    loaded through CuPy, interleaved, L2 flushed, median of @runs."""
    name, run, out, _ = triton_cases()[-1]
    grid, args, ck = run(out)
    torch.cuda.synchronize()
    ptx = ck.asm["ptx"]
    kname = ck.name if hasattr(ck, "name") else ck.metadata.name
    flush = cp.empty(256 << 20, dtype=cp.uint8)
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()

    def kernel(text, tag):
        fn = load_ptx(text, tmp, "bench_%s_%s" % (kname, tag)).get_function(kname)
        if ck.metadata.shared > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = ck.metadata.shared
        return fn

    def timed(fn, text):
        flush.fill(1)
        e0.record()
        fn(tuple(grid) + (1,) * (3 - len(grid)), (ck.metadata.num_warps * 32, 1, 1),
           cupy_args(entry_params(text, kname), args), shared_mem=ck.metadata.shared)
        e1.record()
        e1.synchronize()
        return cp.cuda.get_elapsed_time(e0, e1)

    plain = kernel(ptx, "plain")
    print("| workload | probe | base ms | probed ms | ratio | registers |")
    print("|---|---|---|---|---|---|")
    for pname, path in probe_paths:
        probe = Probe(egpu, path)
        inst, _ = probe.instrument(ptx)
        fn = kernel(inst, pname)
        base, probed = [], []
        for i in range(runs + 3):
            b, p = timed(plain, ptx), timed(fn, inst)
            if i >= 3:
                base.append(b)
                probed.append(p)
        print("| triton matmul 1024^3 fp16 (wgmma) | %s | %.3f | %.3f | %.3f | %d -> %d |"
              % (pname, median(base), median(probed), median(probed) / median(base),
                 plain.num_regs, fn.num_regs))
        probe.close()


def main():
    egpu = Egpu(sys.argv[1])
    if len(sys.argv) > 3 and sys.argv[3] == "--bench":
        torch.zeros(1, device="cuda")
        with tempfile.TemporaryDirectory() as tmp:
            bench_triton_matmul(egpu, [(os.path.basename(p).split(".")[0], p)
                                       for p in sys.argv[4:]], tmp)
        return 0
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    probe = Probe(egpu, sys.argv[2])
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(c[0], lambda c=c: run_triton_case(probe, tmp, *c))
                 for c in triton_cases()]
        cases.append(("cupy RawModule (NVRTC)", lambda: run_cupy_case(probe, tmp)))
        for name, fn in cases:
            try:
                why = fn()
            except Exception as e:  # report and go on with the others
                why = "%s: %s" % (type(e).__name__, e)
            print("%s %s%s" % ("PASS" if not why else "FAIL", name,
                               "" if not why else ": " + why))
            passed += not why
            failed += bool(why)
    probe.close()
    print("frameworks: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
