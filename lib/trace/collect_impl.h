/* SPDX-License-Identifier: MIT */
/* What the collector's files share (collect*.c); see collect.h. */
#ifndef EGPU_TRACE_COLLECT_IMPL_H
#define EGPU_TRACE_COLLECT_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <cupti.h>

#include "collect.h"
#include "symbols.h"

/* ---- libcupti, opened with dlopen (collect_cupti.c) ---- */

#define CUPTI_FUNCS(X)                                                        \
	X(cuptiGetVersion)                                                    \
	X(cuptiGetResultString)                                               \
	X(cuptiSubscribe)                                                     \
	X(cuptiUnsubscribe)                                                   \
	X(cuptiEnableCallback)                                                \
	X(cuptiGetCallbackName)                                               \
	X(cuptiGetTimestamp)                                                  \
	X(cuptiActivityEnable)                                                \
	X(cuptiActivityDisable)                                               \
	X(cuptiActivityRegisterCallbacks)                                     \
	X(cuptiActivityFlushAll)                                              \
	X(cuptiActivityGetNextRecord)                                         \
	X(cuptiActivityGetNumDroppedRecords)

#define CUPTI_FIELD(name) __typeof__(&name) name;
struct cupti_lib {
	void *handle;
	CUPTI_FUNCS(CUPTI_FIELD)
};
#undef CUPTI_FIELD

/*
 * libcupti's entry points: $EGPU_CUPTI_LIB if set, else the loader's
 * search path, then the CUDA install folders. NULL with EGPU_ENODEV and
 * the places tried. Kept loaded for the process once found.
 */
const struct cupti_lib *cupti_lib(void);
/* 0, or @code with "WHAT: CUPTI_ERROR_X" recorded. */
int cupti_check(CUptiResult res, int code, const char *what);

/*
 * uintptr_t (never 0 or 1) -> uint64_t for the callback: lookups without
 * locks from any thread, inserts only, a fixed capacity (a power of two;
 * entries beyond three quarters of it are not kept).
 */
struct lfmap {
	struct lfslot {
		_Atomic uintptr_t key;   /* 0: empty; published after val */
		uint64_t val;
	} *slot;
	size_t cap;
	atomic_size_t used;
};

int lfmap_init(struct lfmap *m, size_t cap);
bool lfmap_get(const struct lfmap *m, uintptr_t key, uint64_t *val);
void lfmap_put(struct lfmap *m, uintptr_t key, uint64_t val);
void lfmap_free(struct lfmap *m);


/* ---- host side: API calls recorded on the calling threads ---- */

enum call_kind {
	CALL_NONE,
	CALL_LAUNCH,  /* a kernel launch */
	CALL_GRAPH,   /* a graph launch */
	CALL_COPY,    /* a memcpy or memset */
	CALL_ALIAS,   /* a driver call inside a recorded runtime call */
};

/*
 * One API call as the callback saw it. A CALL_ALIAS record says that GPU
 * records with correlation id @corr belong to the runtime call @outer.
 */
struct raw_call {
	uint32_t corr;
	uint32_t outer;       /* CALL_ALIAS: the runtime call's id */
	uint32_t tid;
	uint8_t kind;         /* enum call_kind */
	uint16_t frame_n;     /* native frames */
	uint16_t py_n;        /* Python frame ids after them (PY_ENTRY bits) */
	bool py_entries;      /* their PY_ENTRY bits are known */
	uint32_t frame_at;    /* first frame in the chunk's frames[] */
	uint64_t start;
	uint64_t end;         /* set last (release): the record is complete;
				 an alias's is its runtime call's start */
	const char *name;     /* CUPTI's functionName (a global constant) */
};

#define CHUNK_CALLS 512

/* Calls of one thread, appended without locks; chunks chain per trace. */
struct call_chunk {
	struct call_chunk *next;
	bool sealed;          /* its thread has moved on (under c->lock) */
	uint32_t call_n;      /* stored with release by its thread */
	uint32_t done;        /* calls the stream has taken (collect_stream.c) */
	uint32_t frame_n, frame_cap;
	struct raw_call calls[CHUNK_CALLS];
	void *frames[];       /* return addresses, innermost first, then
				 each call's Python frame ids */
};

/* ---- the collection ---- */

#define CTX_MAX 64

struct collect {
	struct collect_opts opts;
	uint32_t raw_frames;          /* frames captured per call */
	struct unwinder *uw;          /* NULL: backtrace() */
	struct pyframes *py;          /* NULL: no Python frames */
	uint64_t gen;                 /* tells threads their chunk is stale */
	CUpti_SubscriberHandle sub;
	bool stopped;

	pthread_mutex_t lock;         /* chunks and ctx */
	struct call_chunk *chunks;
	CUcontext ctx[CTX_MAX];       /* live contexts launches used */
	unsigned ctx_n;

	/* the activity side's, under its own lock until collect_stop() */
	struct trace_op *ops;
	size_t op_n, op_cap;
	uint64_t lost;
	uint64_t newest_end;          /* the latest operation's end */
	uint64_t dropped;             /* let go by the flight recorder */
	struct strpool names;         /* every string of the trace data */
	struct ptrmap kernel_names;   /* CUPTI's name pointer -> demangled */

	/* the tracer's own time on the application's threads, in ticks
	 * (own_ticks()), and the (ticks, ns) at start that convert them */
	atomic_uint_fast64_t host_ticks, stack_ticks, python_ticks, stacks;
	uint64_t tick0, ns0;

	struct stream *stream;        /* streaming the timeline, or NULL */

	struct trace_data td;         /* built by collect_stop() */
	struct collect_counts counts;
};

/*
 * A clock for the tracer's own time, read a dozen times a launch: the
 * time-stamp counter where there is one (a few ns against clock_gettime's
 * tens on a VM), converted to ns at stop by the elapsed time of the trace.
 */
static inline uint64_t own_ticks(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#else
	return now_ns();
#endif
}

/* collect_api.c: the callback subscribed to CUPTI, and its switches. */
void CUPTIAPI collect_callback(void *user, CUpti_CallbackDomain domain,
			       CUpti_CallbackId cbid, const void *data);
/* Free a chunk of calls (collect_api.c makes them). */
/* Bytes of a mapped chunk of @cap frames; chunk_free() unmaps one. */
size_t chunk_bytes(uint32_t cap);
void chunk_free(struct call_chunk *k);
/* Enable the launch (and unless no_copies, copy) callbacks of @c. */
int collect_enable_calls(struct collect *c);
/* Stop accepting calls and wait for callbacks under way to return. */
void collect_quiesce(void);
/* Allow calls for @c (its chunks are fresh). */
void collect_accept(struct collect *c);

/* collect_activity.c: activity buffers into c->ops. */
int collect_activity_start(struct collect *c);
/* Flush everything, stop the activity kinds, detach the buffers. */
void collect_activity_stop(void);

/* collect_unwind.c: return addresses, as backtrace() gives them. */
struct unwinder;
/* NULL where only backtrace() can be used (other CPUs, no libgcc_s). */
struct unwinder *uw_new(void);
/*
 * Up to @max return addresses of the calling thread into @out, innermost
 * first (the first in uw_capture's caller or below); backtrace() where
 * @u is NULL or a frame's rule is beyond the cached kinds.
 */
uint32_t uw_capture(struct unwinder *u, void **out, uint32_t max);
/* The cached walk alone: the count, or -1 where backtrace() must do it. */
int uw_walk(struct unwinder *u, void **out, uint32_t max);
struct uw_counts {
	uint64_t slow;      /* captures left to backtrace(); UINT64_MAX:
			       all (no cached unwinder) */
	uint64_t reused;    /* walks finished from the thread's previous one */
	uintptr_t slow_pc;  /* the first return address the cached walk
			       could not step (0: none, or unknown) */
};
void uw_counts(struct unwinder *u, struct uw_counts *out);
/* Whether [@addr, @addr + @len) lies in the calling thread's stack. */
bool uw_stack_has(uintptr_t addr, size_t len);
void uw_free(struct unwinder *u);

/* collect_python.c: Python frames of the launching thread. */
#define PY_ENTRY 0x80000000u  /* the frame ran first in its eval-loop call */
#define PY_MAX_FRAMES 256     /* Python frames kept per call */

struct pyframes;
/* NULL where this process runs no CPython 3.10+ (or out of memory). */
struct pyframes *py_new(void);
/*
 * The calling thread's Python frames, innermost first, as ids (with
 * PY_ENTRY where known: *entries) into @out; 0 when the thread runs no
 * Python. Takes the GIL for the walk when the thread does not hold it.
 */
uint32_t py_capture(struct pyframes *p, uint32_t *out, uint32_t max,
		    bool *entries);
/* "function (file:line)" of id @id (PY_ENTRY ignored); NULL if unknown. */
const char *py_frame_text(struct pyframes *p, uint32_t id);
/* Free @p, giving back its references to code objects while Python runs. */
void py_free(struct pyframes *p);

/* collect_stack.c: calls and stacks of the trace data from the chunks. */
int collect_build_calls(struct collect *c);
/* Names calls' stacks into c->td.stacks (equal stacks once), across
 * calls to builder_call(); NULL when out of memory. */
struct builder;
struct builder *builder_new(struct collect *c);
/* @call (not an alias) of chunk @k as a trace_api; 0 or EGPU_ENOMEM. */
int builder_call(struct builder *b, const struct call_chunk *k,
		 const struct raw_call *call, struct trace_api *api);
/* Forget where frames were (before their chunks are freed). */
void builder_forget_frames(struct builder *b);
/* counts.slow_frame named; 0 or EGPU_ENOMEM. */
int builder_name_slow_frame(struct builder *b);
void builder_free(struct builder *b);

/*
 * collect_stream.c: the timeline streamed while the trace runs
 * (opts.stream_path). Each drain takes the calls and operations that
 * began more than a lag before the newest operation, writes them
 * (perfetto.c) and adds them to totals (collect_fold.c), then frees them.
 */
int collect_stream_open(struct collect *c);
/* With the activity side's lock held (or after it stopped); @final: all. */
void collect_stream_drain(struct collect *c, bool final);
/* At stop, after the last drain: the totals become the trace data. */
int collect_stream_finish(struct collect *c);
void collect_stream_free(struct collect *c);

/*
 * collect_keep.c, the flight recorder (opts.keep_ns). While running, with
 * the activity side's lock held: let go of operations and of sealed
 * chunks of closed calls older than the window and a margin. At stop,
 * after the aliases are applied: keep the operations of the last keep_ns
 * and say whether @call is kept (it ends in the window, or an operation
 * kept is its own). 0 or EGPU_ENOMEM.
 */
void collect_trim(struct collect *c);
struct keep {
	uint64_t cut;         /* 0: keep everything */
	struct ptrmap corrs;  /* correlation ids of the operations kept */
};
int collect_keep_ops(struct collect *c, struct keep *k);
bool collect_keep_call(const struct keep *k, const struct raw_call *call);

#endif
