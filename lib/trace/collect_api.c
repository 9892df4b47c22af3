/* SPDX-License-Identifier: MIT */
/*
 * The CUPTI callback, on the application's threads: each launch, graph
 * launch and copy call gets a record with its correlation id, times and
 * return addresses (collect_unwind.c); names come later, at collect_stop().
 * Each thread appends to its own chunk without locks.
 *
 * A runtime call (cudaLaunchKernel) makes a driver call (cuLaunchKernel)
 * that CUPTI reports too. Only the runtime call is recorded; when the
 * driver call's correlation id differs, an alias record maps GPU records
 * carrying the driver's id to the runtime call.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collect_impl.h"

#define OPEN_MAX 8
#define SHARED_STACKS 4   /* a loop's launches alternate among a few */

/* The collection calls go to; NULL between traces. */
static struct collect *_Atomic accepting;
/* Callbacks running now (collect_quiesce() waits for none). */
static atomic_uint inflight;
static const struct cupti_lib *lib;

static uint8_t runtime_kind[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static uint8_t driver_kind[CUPTI_DRIVER_TRACE_CBID_SIZE];

/* A call between its enter and exit callbacks. */
struct open_call {
	struct raw_call *call;
	CUpti_CallbackDomain domain;
};

static _Thread_local struct {
	uint64_t gen;                 /* of the collection this state is for */
	struct call_chunk *chunk;
	CUcontext last_ctx;
	uint32_t tid;
	unsigned depth;
	struct open_call open[OPEN_MAX];
	/* the frames the thread stored last in its chunk (share_frames) */
	struct call_chunk *stack_chunk;
	struct { uint32_t at, len; } stored[SHARED_STACKS];
	unsigned stored_next;
} tl;

static enum call_kind kind_of_name(const char *name, bool copies)
{
	if (trace_api_graph(name))
		return CALL_GRAPH;
	/* host functions put on a stream run no GPU work */
	if (has_prefix(name, "cudaLaunchHostFunc") ||
	    has_prefix(name, "cuLaunchHostFunc"))
		return CALL_NONE;
	if (has_prefix(name, "cudaLaunch") || has_prefix(name, "cuLaunch"))
		return CALL_LAUNCH;
	if (copies && (has_prefix(name, "cudaMemcpy") ||
		       has_prefix(name, "cudaMemset") ||
		       has_prefix(name, "cuMemcpy") ||
		       has_prefix(name, "cuMemset")))
		return CALL_COPY;
	return CALL_NONE;
}

/*
 * Classify and enable every callback of @domain by its name. A callback
 * this CUPTI refuses as invalid (an API gone from the driver) is skipped;
 * any other refusal fails.
 */
static int enable_domain(struct collect *c, CUpti_CallbackDomain domain,
			 uint8_t *kinds, size_t n)
{
	const char *name;
	CUptiResult r;
	int err;

	for (size_t cbid = 1; cbid < n; cbid++) {
		kinds[cbid] = CALL_NONE;
		if (lib->cuptiGetCallbackName(domain, cbid, &name) || !name)
			continue;
		kinds[cbid] = kind_of_name(name, !c->opts.no_copies);
		if (kinds[cbid] == CALL_NONE)
			continue;
		r = lib->cuptiEnableCallback(1, c->sub, domain, cbid);
		if (r == CUPTI_ERROR_INVALID_PARAMETER) {
			kinds[cbid] = CALL_NONE;
			continue;
		}
		err = cupti_check(r, EGPU_ENODEV, "cuptiEnableCallback");
		if (err) {
			err_prefix("egpu_trace_start: %s", name);
			return err;
		}
	}
	return 0;
}

int collect_enable_calls(struct collect *c)
{
	int err;

	lib = cupti_lib();
	err = enable_domain(c, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_kind,
			    ARRAY_SIZE(runtime_kind));
	if (!err)
		err = enable_domain(c, CUPTI_CB_DOMAIN_DRIVER_API, driver_kind,
				    ARRAY_SIZE(driver_kind));
	if (err)
		return err;
	/* contexts destroyed meanwhile are not waited for at stop */
	return cupti_check(lib->cuptiEnableCallback(1, c->sub,
			CUPTI_CB_DOMAIN_RESOURCE,
			CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING),
		EGPU_ENODEV, "egpu_trace_start: cuptiEnableCallback");
}

void collect_accept(struct collect *c)
{
	atomic_store(&accepting, c);
}

void collect_quiesce(void)
{
	atomic_store(&accepting, NULL);
	while (atomic_load(&inflight))
		sched_yield();
}

/* Add the time since @since to @sum. */
static void charge(atomic_uint_fast64_t *sum, uint64_t since)
{
	atomic_fetch_add_explicit(sum, own_ticks() - since,
				  memory_order_relaxed);
}

/* Room a call with a stack may take: native and Python frames. */
static uint32_t frames_per_call(const struct collect *c)
{
	return c->raw_frames + (c->py ? PY_MAX_FRAMES : 0);
}

/*
 * Chunks are mapped, not taken from the heap: a trace that lets them go
 * while running (the stream, the flight recorder) would otherwise leave
 * the heap fragmented, its freed chunks' pages resident, about twice the
 * memory of the chunks in use.
 */
size_t chunk_bytes(uint32_t cap)
{
	return sizeof(struct call_chunk) + cap * sizeof(void *);
}

void chunk_free(struct call_chunk *k)
{
	munmap(k, chunk_bytes(k->frame_cap));
}

static struct call_chunk *chunk_new(struct collect *c)
{
	uint32_t cap = frames_per_call(c) * 8 > CHUNK_CALLS * 32 ?
		frames_per_call(c) * 8 : CHUNK_CALLS * 32;
	struct call_chunk *k = mmap(NULL, chunk_bytes(cap),
				    PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (k == MAP_FAILED)
		return NULL;
	k->call_n = 0;
	k->done = 0;
	k->frame_n = 0;
	k->frame_cap = cap;
	pthread_mutex_lock(&c->lock);
	k->next = c->chunks;
	k->sealed = false;
	c->chunks = k;
	/* the flight recorder may free the old one once its calls closed */
	if (tl.chunk)
		tl.chunk->sealed = true;
	pthread_mutex_unlock(&c->lock);
	tl.chunk = k;
	tl.stack_chunk = NULL;
	return k;
}

/* A new record in this thread's chunk, with the stack when @stack. */
static struct raw_call *call_new(struct collect *c, bool stack)
{
	uint32_t want = stack ? frames_per_call(c) : 0;
	struct call_chunk *k = tl.chunk;
	struct raw_call *call;

	if ((!k || k->call_n == CHUNK_CALLS ||
	     k->frame_cap - k->frame_n < want) && !(k = chunk_new(c)))
		return NULL;
	call = &k->calls[k->call_n];
	memset(call, 0, sizeof(*call));
	call->tid = tl.tid;
	call->frame_at = k->frame_n;
	if (want) {
		uint64_t t = own_ticks();

		call->frame_n = (uint16_t)uw_capture(c->uw,
			k->frames + k->frame_n, c->raw_frames);
		charge(&c->stack_ticks, t);
		atomic_fetch_add_explicit(&c->stacks, 1, memory_order_relaxed);
	}
	k->frame_n += call->frame_n;
	/* read while running by the stream (collect_stream.c) */
	__atomic_store_n(&k->call_n, k->call_n + 1, __ATOMIC_RELEASE);
	return call;
}

/* Remember the contexts work went to, so that stop can wait for them. */
static void note_context(struct collect *c, CUcontext ctx)
{
	unsigned i;

	if (!ctx || ctx == tl.last_ctx)
		return;
	tl.last_ctx = ctx;
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->ctx_n && c->ctx[i] != ctx; i++)
		;
	if (i == c->ctx_n && c->ctx_n < CTX_MAX)
		c->ctx[c->ctx_n++] = ctx;
	pthread_mutex_unlock(&c->lock);
}

static void context_gone(struct collect *c, const CUpti_ResourceData *r)
{
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < c->ctx_n; i++) {
		if (c->ctx[i] == r->context) {
			c->ctx[i] = c->ctx[--c->ctx_n];
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	/* another thread may have it cached; it will note it again */
	if (tl.last_ctx == r->context)
		tl.last_ctx = NULL;
}

/*
 * The Python frames of the thread, after @call's native frames in its
 * chunk @k. A launch made meanwhile on this thread (a finalizer run by a
 * collection during the walk) may have taken the place: then none.
 */
static void call_python(struct collect *c, struct call_chunk *k,
			struct raw_call *call)
{
	uint32_t ids[PY_MAX_FRAMES], n;
	bool entries;

	n = py_capture(c->py, ids, PY_MAX_FRAMES, &entries);
	if (!n || k->frame_n != call->frame_at + call->frame_n ||
	    k->frame_cap - k->frame_n < n)
		return;
	for (uint32_t i = 0; i < n; i++)
		k->frames[k->frame_n + i] = (void *)(uintptr_t)ids[i];
	k->frame_n += n;
	call->py_n = (uint16_t)n;
	call->py_entries = entries;
}

/*
 * Launches from one place in a loop have one stack: a call whose frames
 * (native and Python) equal ones its thread stored lately in the same
 * chunk points at those instead of keeping a copy, which saves the memory
 * (and its first-touch page faults) a launch would take, and the naming
 * at stop (collect_stack.c names a shared stack once).
 */
static void share_frames(struct call_chunk *k, struct raw_call *call)
{
	uint32_t len = (uint32_t)call->frame_n + call->py_n;

	if (!len || k->frame_n != call->frame_at + len)
		return;
	if (tl.stack_chunk != k) {
		tl.stack_chunk = k;
		memset(tl.stored, 0, sizeof(tl.stored));
	}
	for (unsigned i = 0; i < SHARED_STACKS; i++) {
		if (tl.stored[i].len == len &&
		    !memcmp(k->frames + tl.stored[i].at,
			    k->frames + call->frame_at, len * sizeof(void *))) {
			k->frame_n = call->frame_at;
			call->frame_at = tl.stored[i].at;
			return;
		}
	}
	tl.stored[tl.stored_next].at = call->frame_at;
	tl.stored[tl.stored_next].len = len;
	tl.stored_next = (tl.stored_next + 1) % SHARED_STACKS;
}

static void call_enter(struct collect *c, CUpti_CallbackDomain domain,
		       enum call_kind kind, const CUpti_CallbackData *cb)
{
	struct open_call *top = tl.depth ? &tl.open[tl.depth - 1] : NULL;
	struct raw_call *call;

	if (domain == CUPTI_CB_DOMAIN_DRIVER_API && top &&
	    top->domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		if (cb->correlationId != top->call->corr &&
		    (call = call_new(c, false))) {
			call->kind = CALL_ALIAS;
			call->corr = cb->correlationId;
			call->outer = top->call->corr;
			/* complete: the stream may read it */
			__atomic_store_n(&call->end, top->call->start | 1,
					 __ATOMIC_RELEASE);
		}
		return;
	}
	if (tl.depth == OPEN_MAX || !(call = call_new(c, true)))
		return;
	if (c->py) {
		uint64_t t = own_ticks();

		call_python(c, tl.chunk, call);
		charge(&c->python_ticks, t);
	}
	share_frames(tl.chunk, call);
	call->kind = (uint8_t)kind;
	call->corr = cb->correlationId;
	call->name = cb->functionName;
	lib->cuptiGetTimestamp(&call->start);
	tl.open[tl.depth++] = (struct open_call){ call, domain };
	note_context(c, cb->context);
}

static void call_exit(CUpti_CallbackDomain domain,
		      const CUpti_CallbackData *cb)
{
	struct open_call *top = tl.depth ? &tl.open[tl.depth - 1] : NULL;
	uint64_t end;

	/* a driver call inside a runtime call has no open record */
	if (!top || top->domain != domain ||
	    top->call->corr != cb->correlationId)
		return;
	lib->cuptiGetTimestamp(&end);
	/* read by the flight recorder on another thread (collect_trim) */
	__atomic_store_n(&top->call->end, end, __ATOMIC_RELEASE);
	tl.depth--;
}

static void api_call(struct collect *c, CUpti_CallbackDomain domain,
		     CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	const uint8_t *kinds = domain == CUPTI_CB_DOMAIN_RUNTIME_API ?
		runtime_kind : driver_kind;
	size_t n = domain == CUPTI_CB_DOMAIN_RUNTIME_API ?
		ARRAY_SIZE(runtime_kind) : ARRAY_SIZE(driver_kind);

	if (cbid >= n || kinds[cbid] == CALL_NONE)
		return;
	if (tl.gen != c->gen) {
		memset(&tl, 0, sizeof(tl));
		tl.gen = c->gen;
	}
	if (!tl.tid)
		tl.tid = (uint32_t)gettid();
	if (cb->callbackSite == CUPTI_API_ENTER)
		call_enter(c, domain, kinds[cbid], cb);
	else
		call_exit(domain, cb);
}

void CUPTIAPI collect_callback(void *user, CUpti_CallbackDomain domain,
			       CUpti_CallbackId cbid, const void *data)
{
	struct collect *c;

	(void)user;
	atomic_fetch_add(&inflight, 1);
	c = atomic_load(&accepting);
	if (c && domain == CUPTI_CB_DOMAIN_RESOURCE &&
	    cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
		context_gone(c, data);
	else if (c && (domain == CUPTI_CB_DOMAIN_RUNTIME_API ||
		       domain == CUPTI_CB_DOMAIN_DRIVER_API)) {
		uint64_t t = own_ticks();

		api_call(c, domain, cbid, data);
		charge(&c->host_ticks, t);
	}
	atomic_fetch_sub(&inflight, 1);
}
