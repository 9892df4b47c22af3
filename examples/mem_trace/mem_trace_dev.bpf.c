// SPDX-License-Identifier: MIT
/*
 * mem_trace's tracing probe with its ring in GPU memory: the same records,
 * written at GPU memory speed and drained by the copy engine
 * (docs/events.md, "Rings in GPU memory").
 */
#define MT_RING_FLAGS EGPU_F_RING_DEVICE
#include "mem_trace.bpf.c"
