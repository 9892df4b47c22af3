/* SPDX-License-Identifier: MIT */
/*
 * One collection at a time (CUPTI takes one subscriber per process):
 * start subscribes the callback and enables the activity kinds; stop waits
 * for the GPU, flushes, unsubscribes and builds the trace data.
 */
#include <errno.h>
#include <execinfo.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect_impl.h"
#include "cuda/cu.h"

/* Frames captured beyond max_frames: this collector, libcupti, libcuda. */
#define INNER_FRAMES 48

static pthread_mutex_t one_lock = PTHREAD_MUTEX_INITIALIZER;
static bool running;
static uint64_t generation;

static int check_version(const struct cupti_lib *lib)
{
	uint32_t v = 0;

	if (lib->cuptiGetVersion(&v) != CUPTI_SUCCESS || v < CUPTI_API_VERSION)
		return err_set(EGPU_ENOTSUP, "egpu_trace_start: libcupti API "
			       "version %u is older than the %u libegpu was "
			       "built for", v, CUPTI_API_VERSION);
	return 0;
}

static int subscribe(struct collect *c, const struct cupti_lib *lib)
{
	CUptiResult r = lib->cuptiSubscribe(&c->sub, collect_callback, NULL);

	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		return err_set(EGPU_EBUSY, "egpu_trace_start: another CUPTI "
			       "client (a profiler?) is subscribed");
	/* CUPTI says little when the reason is that there is no driver;
	 * asked only now, as cu() runs cuInit, and start may run in it */
	if (r != CUPTI_SUCCESS && !cu()) {
		err_prefix("egpu_trace_start");
		return EGPU_ENODEV;
	}
	return cupti_check(r, EGPU_ENODEV, "egpu_trace_start: cuptiSubscribe");
}

static struct collect *collect_new(const struct collect_opts *opts)
{
	struct collect *c = calloc(1, sizeof(*c));

	if (!c) {
		err_set(EGPU_ENOMEM, "egpu_trace_start: out of memory");
		return NULL;
	}
	c->opts = *opts;
	c->raw_frames = c->opts.max_frames + INNER_FRAMES;
	if (!opts->no_python)
		c->py = py_new();
	c->uw = uw_new();
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

static int collect_begin(struct collect *c)
{
	const struct cupti_lib *lib = cupti_lib();
	void *warm[1];
	int err;

	if (!lib)
		return egpu_errcode();
	err = check_version(lib);
	if (!err)
		err = subscribe(c, lib);
	if (err)
		return err;
	/* the file once CUPTI is ours: a start refused leaves none */
	if (c->opts.stream_path && (err = collect_stream_open(c))) {
		lib->cuptiUnsubscribe(c->sub);
		return err;
	}
	/* backtrace() loads libgcc_s at its first call: not in a callback */
	backtrace(warm, 1);
	c->gen = ++generation;
	c->tick0 = own_ticks();
	c->ns0 = now_ns();
	collect_accept(c);
	err = collect_enable_calls(c);
	if (!err)
		err = collect_activity_start(c);
	if (err) {
		collect_quiesce();
		lib->cuptiUnsubscribe(c->sub);
	}
	return err;
}

struct collect *collect_start(const struct collect_opts *opts)
{
	struct collect *c;

	pthread_mutex_lock(&one_lock);
	if (running) {
		pthread_mutex_unlock(&one_lock);
		err_set(EGPU_EBUSY, "egpu_trace_start: a trace is running in "
			"this process already");
		return NULL;
	}
	c = collect_new(opts);
	if (c && collect_begin(c)) {
		c->stopped = true;
		collect_free(c);
		c = NULL;
	}
	running = c != NULL;
	pthread_mutex_unlock(&one_lock);
	return c;
}

/*
 * Wait for the work the traced launches queued, so that every activity
 * record is complete. A context destroyed meanwhile has finished anyway.
 */
static void synchronize(struct collect *c)
{
	CUcontext ctx[CTX_MAX], saved = NULL;
	const struct cu_driver *d;
	unsigned n;

	pthread_mutex_lock(&c->lock);
	n = c->ctx_n;
	memcpy(ctx, c->ctx, n * sizeof(*ctx));
	pthread_mutex_unlock(&c->lock);
	if (!n || !(d = cu()) || d->cuCtxGetCurrent(&saved) != CUDA_SUCCESS)
		return;
	for (unsigned i = 0; i < n; i++)
		if (d->cuCtxSetCurrent(ctx[i]) == CUDA_SUCCESS)
			d->cuCtxSynchronize();
	d->cuCtxSetCurrent(saved);
}

static void collect_end(struct collect *c)
{
	synchronize(c);
	collect_quiesce();
	collect_activity_stop();
	cupti_lib()->cuptiUnsubscribe(c->sub);
	c->stopped = true;
	pthread_mutex_lock(&one_lock);
	running = false;
	pthread_mutex_unlock(&one_lock);
}

/*
 * What the callbacks cost the application's threads: own_ticks() become
 * ns at the rate they ran at over the trace.
 */
static void count_own_time(struct collect *c)
{
	struct collect_counts *n = &c->counts;
	uint64_t dt = own_ticks() - c->tick0, dns = now_ns() - c->ns0;
	double ns_per_tick = dt ? (double)dns / (double)dt : 0;
	struct uw_counts uw;

	uw_counts(c->uw, &uw);
	n->slow_pc = uw.slow_pc;
	n->stacks_reused = uw.reused;
	n->host_ns = (uint64_t)(atomic_load(&c->host_ticks) * ns_per_tick);
	n->stack_ns = (uint64_t)(atomic_load(&c->stack_ticks) * ns_per_tick);
	n->python_ns = (uint64_t)(atomic_load(&c->python_ticks) * ns_per_tick);
	n->stacks = atomic_load(&c->stacks);
	n->stacks_slow = uw.slow < n->stacks ? uw.slow : n->stacks;
}

struct trace_data *collect_stop(struct collect *c,
				struct collect_counts *counts)
{
	if (c->stopped) {
		err_set(EGPU_EINVAL, "egpu_trace_stop: stopped already");
		return NULL;
	}
	collect_end(c);
	c->td.process = strpool_add(&c->names, program_invocation_short_name,
				    strlen(program_invocation_short_name));
	if (!c->td.process) {
		err_set(EGPU_ENOMEM, "egpu_trace_stop: out of memory");
		return NULL;
	}
	c->td.pid = (uint32_t)getpid();
	c->td.lost = c->lost;
	count_own_time(c);
	if (c->stream ? collect_stream_finish(c) : collect_build_calls(c))
		return NULL;
	c->td.ops = c->ops;   /* as many as the flight recorder kept */
	c->td.op_cnt = c->op_n;
	c->counts.dropped = c->dropped;
	*counts = c->counts;
	return &c->td;
}

void collect_free(struct collect *c)
{
	struct call_chunk *next;

	if (!c)
		return;
	if (!c->stopped)
		collect_end(c);
	collect_stream_free(c);
	for (struct call_chunk *k = c->chunks; k; k = next) {
		next = k->next;
		chunk_free(k);
	}
	for (size_t i = 0; i < c->td.stack_cnt; i++)
		free(c->td.stacks[i].frames);
	free(c->td.stacks);
	free(c->td.apis);
	free(c->ops);
	strpool_free(&c->names);
	ptrmap_free(&c->kernel_names);
	py_free(c->py);
	uw_free(c->uw);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
