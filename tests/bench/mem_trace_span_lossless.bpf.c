// SPDX-License-Identifier: MIT
/*
 * bench_mem's "trace (spans, lossless)" row: mem_trace's span trace into a
 * lossless ring in GPU memory of 16 MiB, smaller than the traces, so the
 * warps wait for the consumer thread draining while the kernel runs
 * (docs/events.md "Lossless rings"): the ratio is the host's drain rate.
 */
#define MT_SPAN_RING_FLAGS (EGPU_F_RING_DEVICE | EGPU_F_RING_LOSSLESS)
#define MT_SPAN_RING_BYTES (1 << 24)
#include "../../examples/mem_trace/mem_trace_span.bpf.c"
