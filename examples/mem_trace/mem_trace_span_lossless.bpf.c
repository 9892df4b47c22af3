// SPDX-License-Identifier: MIT
/*
 * mem_trace's span trace, lossless: into a lossless ring in GPU memory of
 * 16 MiB, so the warps wait for the host draining while the kernel runs
 * (docs/events.md "Lossless rings"): nothing dropped unless the host
 * stops for a second. bench_mem's "trace (spans, lossless)" row, and the
 * probe of `egpu attach --trace FILE` (docs/attach.md).
 */
#define MT_SPAN_RING_FLAGS (EGPU_F_RING_DEVICE | EGPU_F_RING_LOSSLESS)
#define MT_SPAN_RING_BYTES (1 << 24)
#include "mem_trace_span.bpf.c"
