// SPDX-License-Identifier: MIT
// Experiment: timing_tl.bpf.c with the histogram laid out SM-major (an
// ARRAY indexed by %smid * BUCKETS + bucket) instead of an SM array's
// key-major copies, to see what the layout of per-SM copies costs.
#define HIST_SM_MAJOR
#include "timing_tl.bpf.c"
