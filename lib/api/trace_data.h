/* SPDX-License-Identifier: MIT */
/* The data of a stopped egpu_trace, for writers above lib/api (lib/export). */
#ifndef EGPU_API_TRACE_DATA_H
#define EGPU_API_TRACE_DATA_H

#include "egpu.h"
#include "trace/trace.h"

/* @t's data once stopped; else EGPU_EINVAL with a message naming @fn. */
int trace_data_of(const egpu_trace *t, const char *fn,
		  const struct trace_data **td);

#endif
