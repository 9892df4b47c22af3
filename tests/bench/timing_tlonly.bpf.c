// SPDX-License-Identifier: MIT
// Experiment: timing_tl.bpf.c with one histogram for the whole GPU (an
// ARRAY, as timing.bpf.c), to tell the thread-local start's share of the
// gain from the per-SM copies'.
#define HIST_ONE_COPY
#include "timing_tl.bpf.c"
