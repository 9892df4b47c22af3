// SPDX-License-Identifier: MIT
/*
 * bench_mem's span rows kept in GPU memory: mem_trace's span trace into a
 * 1 GiB ring in GPU memory, which holds a whole run (SGEMM 2048^3 makes
 * about 450 MB of spans; the example's 256 MiB ring dropped 45% of them,
 * and a dropped access takes the device runtime's slow path, so the
 * "empty ring" figure measured drops, not the record path).
 */
#define MT_SPAN_RING_FLAGS EGPU_F_RING_DEVICE
#define MT_SPAN_RING_BYTES (1 << 30)
#include "../../examples/mem_trace/mem_trace_span.bpf.c"
