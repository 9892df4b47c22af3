# SPDX-License-Identifier: MIT
# %% [markdown]
# # threadhist: per-thread runs and time of a CuPy kernel
#
# A grid-stride loop over an element count that is not a multiple of the
# grid gives some GPU threads one more trip than the others. libegpu splices
# two small eBPF probes (`examples/threadhist/threadhist.bpf.c`) into the
# kernel's PTX before CuPy loads it: at entry each thread notes the time
# (`%globaltimer`), at exit it adds one run and the time it spent to its own
# slot of a per-thread map. Reading that map gives one number per GPU
# thread, as a numpy array, ready to plot.
#
# This file is both a script (`python3 threadhist.py [--check] [--out PNG]`)
# and, cell by cell, the notebook `threadhist.ipynb` (`make_notebook.py`
# writes one from the other).

# %%
import argparse
import hashlib
import sys
from pathlib import Path

import egpu

HERE = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
IN_JUPYTER = "ipykernel" in sys.modules


def parse_args():
    ap = argparse.ArgumentParser(description="Per-thread runs and time of a "
                                 "CuPy kernel, counted by eBPF probes.")
    ap.add_argument("--probe", default=str(HERE.parent.parent / "build/examples"
                                           "/notebook/threadhist.bpf.o"),
                    help="the threadhist probe object (default: the build's)")
    ap.add_argument("--out", default="threadhist.png",
                    help="where the plot goes; the instrumented PTX goes next to it")
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless every launched thread ran --launches "
                    "times; 77 (skipped) without a GPU, CuPy or matplotlib")
    # Jupyter hands the kernel arguments of its own: the defaults apply there.
    return ap.parse_args([] if IN_JUPYTER else None)


args = parse_args()


def skip(why):
    """Nothing can run here: say why and stop (--check: 77, ctest's skip)."""
    print(f"threadhist: {why}; nothing to run")
    raise SystemExit(77 if args.check else 0)


try:
    import cupy as cp
    import matplotlib
    import numpy as np
    from cupy_backends.cuda.libs import nvrtc
    if not IN_JUPYTER:
        matplotlib.use("Agg")  # no display needed: the plot goes to --out
    import matplotlib.pyplot as plt
except ImportError as e:
    skip(f"{e.name} is not installed")
if not egpu.gpu_available():
    skip(f"no GPU ({egpu.gpu_unavailable_reason()})")

# %% [markdown]
# ## The kernel, compiled to PTX with NVRTC
#
# One block per SM, 256 threads each, over 3.5 times as many elements as
# threads: the first half of the threads make four trips, the rest three.
# NVRTC gives PTX text, which is what libegpu instruments.

# %%
KERNEL = r"""
extern "C" __global__ void stride_work(float *x, int n, int rounds)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x) {
		float v = x[i];

		for (int r = 0; r < rounds; r++)
			v = v * 0.999f + 0.5f;
		x[i] = v;
	}
}
"""

dev = cp.cuda.Device(0)
dev.use()  # egpu puts its maps in the CUDA context that is current
CC = dev.compute_capability  # "90" on an H100
GRID, BLOCK = dev.attributes["MultiProcessorCount"], 256
THREADS = GRID * BLOCK
N = THREADS * 3 + THREADS // 2
ROUNDS = 2000

prog = nvrtc.createProgram(KERNEL, "stride_work.cu", [], [])
try:
    nvrtc.compileProgram(prog, [f"-arch=compute_{CC}"])
    ptx = nvrtc.getPTX(prog)
except nvrtc.NVRTCError:
    print(nvrtc.getProgramLog(prog))
    raise
finally:
    nvrtc.destroyProgram(prog)
if isinstance(ptx, bytes):  # CuPy returns bytes (older versions: str)
    ptx = ptx.decode()
ptx = ptx.rstrip("\0")
name = cp.cuda.runtime.getDeviceProperties(0)["name"]
print(f"{name.decode() if isinstance(name, bytes) else name}: "
      f"{GRID} blocks x {BLOCK} threads over {N} elements")
print(f"NVRTC made {len(ptx)} bytes of PTX for compute_{CC}")

# %% [markdown]
# ## Load the probe and instrument the PTX
#
# `attach_all()` attaches each program where its section says:
# `gpu/entry/stride_work` and `gpu/exit/stride_work`. `instrument()` returns
# the new PTX and a report of what it patched.

# %%
ctx = egpu.Context(sm=f"sm_{CC}")
obj = ctx.load(args.probe)
print(obj)
print("attached:", obj.attach_all(), "programs")
instrumented, report = ctx.instrument(ptx)
for k in report.kernels:
    print(f"kernel {k.kernel_id} {k.demangled}: {k.entry_points} entry, "
          f"{k.exit_points} exit points, {k.programs} programs")
print(f"instrumented in {report.instrument_ms:.1f} ms")

# %% [markdown]
# ## Run it with CuPy
#
# CuPy caches modules by file path, so the instrumented PTX gets a file name
# of its own content: running these cells again after instrumenting anew
# cannot pick up the module of an earlier run.

# %%
out_dir = Path(args.out).resolve().parent
out_dir.mkdir(parents=True, exist_ok=True)
digest = hashlib.sha256(instrumented.encode()).hexdigest()[:16]
ptx_path = out_dir / f"threadhist-{digest}.ptx"
ptx_path.write_text(instrumented)
stride_work = cp.RawModule(path=str(ptx_path)).get_function("stride_work")

x = cp.zeros(N, dtype=cp.float32)
for _ in range(args.launches):
    stride_work((GRID,), (BLOCK,), (x, cp.int32(N), cp.int32(ROUNDS)))
dev.synchronize()
print(f"{args.launches} launches of stride_work done")

# %% [markdown]
# ## Read the per-thread map
#
# `per_thread[key]` is a numpy array with one value per thread slot (slot =
# global thread index): key 0 counts runs, key 1 sums nanoseconds.

# %%
per_thread = obj.maps["per_thread"]
all_runs, all_ns = per_thread[0], per_thread[1]
print(f"{per_thread.values_per_key} slots per key, {THREADS} threads launched")
runs, ns = all_runs[:THREADS], all_ns[:THREADS]
us_per_run = ns / np.maximum(runs, 1) / 1e3
trips = (N - np.arange(THREADS) + THREADS - 1) // THREADS

print(f"{'trips':>5} {'threads':>8} {'runs':>8} {'mean us/run':>12}")
for t in np.unique(trips):
    sel = trips == t
    print(f"{t:>5} {sel.sum():>8} {runs[sel].sum():>8} "
          f"{us_per_run[sel].mean():>12.2f}")
slow, fast = us_per_run[trips == trips.max()], us_per_run[trips == trips.min()]
print(f"imbalance: {trips.max()}-trip threads spend {slow.mean() / fast.mean():.2f}x "
      f"the time of {trips.min()}-trip threads")

# %% [markdown]
# ## Check: every launched thread ran every launch, no other slot ran
#
# (With `--check` the script exits 1 when this fails.)

# %%
wrong = np.flatnonzero(runs != args.launches)
problems = []
if wrong.size:
    problems.append(f"{wrong.size} threads did not run {args.launches} times "
                    f"(thread {wrong[0]}: {runs[wrong[0]]})")
if all_runs[THREADS:].any():
    problems.append(f"{np.count_nonzero(all_runs[THREADS:])} slots beyond the "
                    "launched threads ran")
if not (ns > 0).all():
    problems.append(f"{np.count_nonzero(ns == 0)} threads have no time")
if problems:
    print("CHECK FAILED:", "; ".join(problems))
    if args.check:
        raise SystemExit(1)
else:
    print(f"every one of the {THREADS} threads ran {args.launches} times, "
          "every other slot 0")

# %% [markdown]
# ## Plot: time per run, per thread
#
# Left: each thread's mean time per run against its index; the step is
# where the extra trip stops. Right: how many threads took how long.

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
bins = np.linspace(us_per_run.min(), us_per_run.max(), 60)
for t in np.unique(trips):
    sel = trips == t
    left.plot(np.flatnonzero(sel), us_per_run[sel], ".", markersize=1,
              label=f"{t} trips")
    right.hist(us_per_run[sel], bins=bins, alpha=0.7, label=f"{t} trips")
left.set_ylim(bottom=0)
left.set(xlabel="global thread index", ylabel="µs per run",
         title="mean time per run, per thread")
right.set(xlabel="µs per run", ylabel="threads", title="threads by time per run")
left.legend(markerscale=10)
right.legend()
fig.suptitle(f"stride_work: {GRID}x{BLOCK} threads, {N} elements, "
             f"{args.launches} launches")
fig.tight_layout()
fig.savefig(args.out, dpi=100)
print(f"saved {args.out}")

# %%
ctx.close()  # frees the maps; the CuPy module must not be launched again
