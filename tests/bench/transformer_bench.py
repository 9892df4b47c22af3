#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Probe cost on a real model (issue 24): a GPT-2-small-like transformer
(12 layers, d 768, 12 heads, sequence 1024, batch 8, bf16), torch.compile'd,
every Triton kernel instrumented through egpu.triton with a per-thread
timing probe written naively (naive_timing.bpf.c) and by hand
(tuned_timing.bpf.c). Each variant's forward pass is captured in a CUDA
graph; the graphs are replayed interleaved, and the median of RUNS whole-
forward times is reported per variant, with the card's name. Outputs must
be bit-identical to the plain run's.

    transformer_bench.py BENCH_DIR [RUNS]

Exits 0 with a message where PyTorch, Triton or a GPU is missing.
"""
import ctypes
import statistics
import sys

LAYERS, D, HEADS, SEQ, BATCH = 12, 768, 12, 1024, 8
PROBES = (("naive probe", "naive_timing.bpf.o"),
          ("tuned probe", "tuned_timing.bpf.o"))


def skip(why):
    print(f"transformer_bench: skipped: {why}")
    sys.exit(0)


try:
    import torch
    import torch.nn.functional as F
    import triton  # noqa: F401  (egpu.triton needs it)
except ImportError as e:
    skip(f"{e.name} is not installed")
if not torch.cuda.is_available():
    skip("no CUDA device")
import egpu
import egpu.triton


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(D), torch.nn.LayerNorm(D)
        self.qkv, self.proj = torch.nn.Linear(D, 3 * D), torch.nn.Linear(D, D)
        self.up, self.down = torch.nn.Linear(D, 4 * D), torch.nn.Linear(4 * D, D)

    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        q, k, v = (t.view(BATCH, SEQ, HEADS, D // HEADS).transpose(1, 2)
                   for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(BATCH, SEQ, D))
        return x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.Sequential(*(Block() for _ in range(LAYERS)))
        self.ln = torch.nn.LayerNorm(D)

    def forward(self, x):
        return self.ln(self.blocks(x))


def capture(model, x):
    """The compiled forward pass in a CUDA graph, and its output tensor."""
    fn = torch.compile(model)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):  # compile, autotune, warm up
            fn(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn(x)
    torch.cuda.synchronize()
    return fn, graph, out


def time_ms(graph):
    start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
    start.record()
    graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def model_and_input():
    """The model and its input, the same in every run."""
    torch.manual_seed(0)
    # The same kernels in every compile: no choice by timing (docs/frameworks.md).
    torch._inductor.config.triton.autotune_pointwise = False
    model = Model().cuda().to(torch.bfloat16).eval()
    x = torch.randn(BATCH, SEQ, D, device="cuda", dtype=torch.bfloat16)
    return model, x


def interleaved(names, runs, replay):
    """{name: [ms]}: replay(i) of each variant in turn, RUNS rounds (at
    least 20), each round starting one variant further on."""
    times = {name: [] for name in names}
    for r in range(max(runs, 20)):
        for i in [(r + k) % len(names) for k in range(len(names))]:
            times[names[i]].append(replay(i))
    return times


def heading(times):
    """Prints the card and the run's shape; the plain forward's median."""
    card = torch.cuda.get_device_name()
    print(f"GPU: {card}; forward of {LAYERS} layers, d {D}, seq {SEQ}, "
          f"batch {BATCH}, bf16; median of {len(times['plain'])} interleaved runs")
    return statistics.median(times["plain"])


def main():
    bench = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    model, x = model_and_input()
    variants, keep = [], []
    with torch.no_grad():
        variants.append(("plain",) + capture(model, x)[1:])
        for name, obj_file in PROBES:
            ctx = egpu.Context()
            obj = ctx.load(f"{bench}/{obj_file}")
            obj.attach_all()
            inst = egpu.triton.instrument(obj)
            with inst:
                fn, graph, out = capture(model, x)
            keep.append((ctx, obj, inst, fn))  # kernels and maps stay alive
            variants.append((name, graph, out))
        times = interleaved([v[0] for v in variants], runs,
                            lambda i: time_ms(variants[i][1]))
    base = heading(times)
    print("| variant | forward ms | vs plain | outputs |")
    print("|---|---|---|---|")
    ok = True
    for name, _, out in variants:
        same = torch.equal(out, variants[0][2])
        ok &= same
        ms = statistics.median(times[name])
        print(f"| {name} | {ms:.3f} | {ms / base:.3f}x | "
              f"{'bit-identical' if same else 'DIFFER'} |")
    for (_, obj, inst, _), (name, _) in zip(keep, PROBES):
        stats = obj.maps["kstats"].as_type(value=ctypes.c_uint64 * 2)
        per_kernel = stats.by_kernel()  # {kernel: (ns, runs)}, summed over SMs
        threads = sum(v[1] for v in per_kernel.values())
        print(f"{name}: {len(per_kernel)} kernels, {threads} thread runs timed")
        ok &= threads > 0
        inst.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
