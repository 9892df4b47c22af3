/* SPDX-License-Identifier: MIT */
/*
 * The trace data model shared by the CUPTI collector (collect*.c) and the
 * writers (folded, chrome, svg, summary). The collector fills a
 * struct trace_data; trace_join() links GPU operations to the launch API
 * call that caused them; the writers only read.
 *
 * Times are nanoseconds on CUPTI's clock (cuptiGetTimestamp), which both
 * the API callbacks and the activity records use.
 */
#ifndef EGPU_TRACE_H
#define EGPU_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TRACE_NONE UINT32_MAX

/* One host call stack, outermost frame first ("main", ..., the API). */
struct trace_stack {
	uint32_t n;
	const char **frames; /* demangled names or "lib.so+0x1a2b" */
};

/* One CUDA API call of interest on a host thread (launches, copies). */
struct trace_api {
	uint32_t corr;   /* CUPTI correlation id */
	uint32_t tid;    /* host thread id */
	uint64_t start;  /* API entry */
	uint64_t end;    /* API exit */
	const char *name;  /* "cudaLaunchKernel", "cuLaunchKernelEx", ... */
	uint32_t stack;  /* index into trace_data.stacks, or TRACE_NONE */
};

enum trace_op_kind {
	TRACE_KERNEL,
	TRACE_MEMCPY,
	TRACE_MEMSET,
};

/* One operation the GPU executed. A graph launch gives several operations
 * with its one correlation id. */
struct trace_op {
	enum trace_op_kind kind;
	uint32_t corr;
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint64_t start;
	uint64_t end;
	const char *name;  /* demangled kernel name, or "memcpy HtoD", ... */
	uint64_t bytes;    /* copies and sets; 0 for kernels */
	uint32_t api;      /* set by trace_join(): index into apis, or TRACE_NONE */
	/* how many runs this stands for: 0 or 1, one; more in a streamed
	 * trace's totals (collect_fold.c), where end - start and bytes are
	 * their sums */
	uint64_t count;
};

/* The runs @op stands for (its count, at least 1). */
static inline uint64_t op_count(const struct trace_op *op)
{
	return op->count ? op->count : 1;
}

struct trace_data {
	const char *process;   /* short program name for titles */
	uint32_t pid;          /* the traced process (0: unknown) */
	struct trace_api *apis;
	size_t api_cnt;
	struct trace_op *ops;
	size_t op_cnt;
	struct trace_stack *stacks;
	size_t stack_cnt;
	uint64_t lost;         /* activity records CUPTI dropped */
	/* when ops are totals (a streamed trace): the first start and last
	 * end of their runs; both 0 otherwise */
	uint64_t ops_from, ops_to;
};

/*
 * Set every op's api by correlation id; returns the kernel runs matched.
 * Sorts apis by correlation id (in place: it cannot fail).
 */
size_t trace_join(struct trace_data *td);

/* The time of the first call or operation (0 for an empty trace). */
uint64_t trace_first_ns(const struct trace_data *td);

/* Whether the API @name launches a CUDA graph (cudaGraphLaunch, ...). */
bool trace_api_graph(const char *name);

/* Writers: 0 or a negative EGPU_E* with a message. */
int trace_write_folded(const struct trace_data *td, FILE *f);
int trace_write_chrome(const struct trace_data *td, FILE *f);
/* Perfetto's protobuf trace (perfetto.c): binary, for a file. */
int trace_write_perfetto(const struct trace_data *td, FILE *f);
int trace_write_svg(const struct trace_data *td, FILE *f);
/* @top: kernels listed, 0 for all. */
int trace_write_summary(const struct trace_data *td, FILE *f, unsigned top);

struct egpu_trace_kernel;
/*
 * The kernels by name (egpu_trace_kernel()), most GPU time first: a
 * malloc'ed array of *cnt that also holds their strings; free() it.
 * Runs of every device add up. 0 or EGPU_ENOMEM with a message.
 */
int trace_kernels(const struct trace_data *td, struct egpu_trace_kernel **out,
		  size_t *cnt);

#endif
