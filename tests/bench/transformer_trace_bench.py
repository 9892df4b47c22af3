#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The splicer's trace mode on a real model (issue 23): transformer_bench's
transformer, torch.compile'd, every global access of every Triton kernel
traced through egpu.triton into a 1 GiB ring in GPU memory
(mem_trace_span_1g.bpf.o), with each traced kernel's registers capped at
its untraced occupancy (the default) and left to ptxas ("any"). Each
variant's forward pass is captured in a CUDA graph; the graphs are replayed
interleaved, and the ring is drained after each replay, untimed, so that
every timed replay writes into an empty ring: the cost of a complete trace
kept in GPU memory. Outputs must be bit-identical to the plain run's.

    transformer_trace_bench.py BENCH_DIR [RUNS]

Exits 0 with a message where PyTorch, Triton or a GPU is missing.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transformer_bench as tb  # noqa: E402  (exits 0 without PyTorch or a GPU)
import torch  # noqa: E402
import egpu  # noqa: E402
import egpu.triton  # noqa: E402

VARIANTS = (("trace, registers capped (default)", None),
            ("trace, registers uncapped", "any"))


class Drain:
    """A variant's ring, drained as chunks: spans and bytes per replay."""

    def __init__(self, ring):
        self.bytes = 0
        self.rb = egpu.RingBuffer(ring, self.take, chunks=True)

    def take(self, chunk):
        self.bytes += len(chunk)

    def replay(self, graph):
        self.bytes = 0
        ms = tb.time_ms(graph)
        spans = self.rb.consume()
        return ms, spans, self.bytes


def main():
    bench = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    model, x = tb.model_and_input()
    variants, keep = [], []
    with torch.no_grad():
        variants.append(("plain",) + tb.capture(model, x)[1:] + (None,))
        for name, regs in VARIANTS:
            ctx = egpu.Context()
            obj = ctx.load(f"{bench}/mem_trace_span_1g.bpf.o")
            ctx.mem_trace(obj.maps["events"], max_registers=regs)
            drain = Drain(obj.maps["events"])
            inst = egpu.triton.instrument(ctx)
            with inst:
                fn, graph, out = tb.capture(model, x)
            drain.rb.consume()  # what the compile's runs wrote
            keep.append((ctx, obj, inst, fn))
            variants.append((name, graph, out, drain))
        traced = {}

        def replay(i):
            name, graph, _, drain = variants[i]
            if drain is None:
                return tb.time_ms(graph)
            ms, spans, nbytes = drain.replay(graph)
            traced[name] = (spans, nbytes, drain.rb.drops)
            return ms

        times = tb.interleaved([v[0] for v in variants], runs, replay)
    base = tb.heading(times)
    print("| variant | forward ms | vs plain | spans a forward | MB a forward | dropped | outputs |")
    print("|---|---|---|---|---|---|---|")
    ok = True
    for name, _, out, drain in variants:
        same = torch.equal(out, variants[0][2])
        ok &= same
        ms = statistics.median(times[name])
        spans, nbytes, drops = traced.get(name, (0, 0, 0))
        ok &= drain is None or (spans > 0 and drops == 0)
        print(f"| {name} | {ms:.3f} | {ms / base:.3f}x | "
              f"{spans if drain else '-'} | "
              f"{f'{nbytes / 1e6:.1f}' if drain else '-'} | "
              f"{drops if drain else '-'} | "
              f"{'bit-identical' if same else 'DIFFER'} |")
    for _, _, inst, _ in keep:
        inst.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
