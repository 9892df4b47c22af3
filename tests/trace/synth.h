/* SPDX-License-Identifier: MIT */
/*
 * A synthetic trace for the writers' tests: two devices, plain and graph
 * launches, two stacks with the same frames, an operation no launch
 * matches, copies and sets, a launch without a stack, and names that need
 * escaping in every format.
 */
#ifndef EGPU_TEST_TRACE_SYNTH_H
#define EGPU_TEST_TRACE_SYNTH_H

#include "trace/trace.h"

/* The kernel with characters that JSON, XML and the folded format mind. */
#define ODD_KERNEL "op<a&b>\"q\";x\n\xff"

/* The synthetic trace, joined; @devices 1 or 2. Static storage. */
struct trace_data *synth_trace(unsigned devices);
/* GPU ns of the kernels named @name (NULL: every operation). */
uint64_t synth_ns(const struct trace_data *td, const char *name);

#endif
