// SPDX-License-Identifier: MIT
/*
 * mem_trace's span trace, lossless: into a lossless ring in GPU memory of
 * 256 MiB (docs/events.md "Lossless rings" says why that size), so the
 * warps wait for the host draining only once that much is ahead of it:
 * nothing dropped unless the host stops for a second. bench_mem's "trace
 * (spans, lossless)" rows, and the probe of `egpu attach --trace FILE`
 * (docs/attach.md).
 */
#define MT_SPAN_RING_FLAGS (EGPU_F_RING_DEVICE | EGPU_F_RING_LOSSLESS)
#define MT_SPAN_RING_BYTES (1 << 28)
#include "mem_trace_span.bpf.c"
