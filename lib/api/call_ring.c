/* SPDX-License-Identifier: MIT */
/*
 * User helpers called on the GPU: the context's call ring, which probes
 * fill with one record per call (lib/device/call.cuh), and its consumer,
 * which makes each call through libffi (helper.c). One consumer at a time
 * (the lock) and the ring's order give every GPU thread its calls in the
 * order it made them. By default a dispatcher thread consumes, starting
 * with the ring; egpu_helper_poll() consumes on the caller's thread.
 */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "maps/ring_layout.h"

#define CALL_RING_BYTES (4u << 20)
/* Longest the dispatcher sleeps before it looks for a stop request. */
#define CALL_THREAD_WAKE_MS 20

struct call_state {
	pthread_mutex_t lock;    /* one consumer of the ring at a time */
	struct ctx_ring r;
	pthread_mutex_t thread_lock; /* starting and stopping the thread */
	enum egpu_helper_dispatch how;
	bool running;
	int stop;                /* atomic: the dispatcher should return */
	pthread_t thread;
};

static struct call_state *call_get(const struct egpu_ctx *ctx)
{
	return __atomic_load_n(&ctx->calls, __ATOMIC_ACQUIRE);
}

static struct event_ring *call_ring(const struct call_state *cs)
{
	return cs ? __atomic_load_n(&cs->r.ring, __ATOMIC_ACQUIRE) : NULL;
}

static void call_init(void *p)
{
	struct call_state *cs = p;

	pthread_mutex_init(&cs->lock, NULL);
	pthread_mutex_init(&cs->thread_lock, NULL);
}

static void call_fini(void *p)
{
	struct call_state *cs = p;

	pthread_mutex_destroy(&cs->lock);
	pthread_mutex_destroy(&cs->thread_lock);
}

static struct call_state *call_state(struct egpu_ctx *ctx)
{
	return lazy_make((void **)&ctx->calls, sizeof(struct call_state),
			 call_init, call_fini, "user helpers");
}

/* ---- making the calls ---- */

/* Record bytes a call of @u takes: the layout call.cuh writes. */
static size_t record_size(const struct user_helper *u)
{
	size_t n = sizeof(struct call_rec) + 8u * u->info.nargs;

	for (unsigned i = 0; i < u->info.nargs; i++)
		if (u->info.args[i] != ARG_SCALAR)
			n += CALL_BUF_BYTES(u->size[i]);
	return n;
}

static int call_record(void *user, const void *data, size_t size)
{
	struct egpu_ctx *ctx = user;
	const struct call_rec *c = data;
	const struct user_helper *u = NULL;
	uint8_t bufs[CALL_MAX_ARGS][EGPU_HELPER_BUF_MAX];
	uint64_t args[CALL_MAX_ARGS];
	const uint8_t *src;

	if (size >= sizeof(*c))
		u = user_helper_find(__atomic_load_n(&ctx->helpers,
						     __ATOMIC_ACQUIRE),
				     (int32_t)c->id);
	if (!u || c->nargs != u->info.nargs || size != record_size(u))
		return err_set(EGPU_EFORMAT, "call ring: malformed record (%zu "
			       "bytes, helper 0x%x)", size,
			       size >= sizeof(*c) ? c->id : 0);
	src = (const uint8_t *)(c->args + c->nargs);
	for (unsigned i = 0; i < u->info.nargs; i++) {
		args[i] = c->args[i];
		if (u->info.args[i] == ARG_SCALAR)
			continue;
		/* The function may write its buffers: never the ring's. */
		memcpy(bufs[i], src, u->size[i]);
		args[i] = (uintptr_t)bufs[i];
		src += CALL_BUF_BYTES(u->size[i]);
	}
	helper_call(u, args);
	return 0;
}

static int call_drain(struct egpu_ctx *ctx)
{
	struct call_state *cs = call_get(ctx);
	int n = 0;

	if (!cs)
		return 0;
	pthread_mutex_lock(&cs->lock);
	if (cs->r.ring)
		n = ring_consume(cs->r.ring, call_record, ctx, NULL);
	pthread_mutex_unlock(&cs->lock);
	return n;
}

/* ---- the dispatcher thread ---- */

static bool call_ready(void *arg)
{
	struct event_ring *ring = call_ring(arg);

	return ring && ring_ready(ring);
}

static bool dispatcher_wake(void *arg)
{
	struct call_state *cs = arg;

	return __atomic_load_n(&cs->stop, __ATOMIC_ACQUIRE) || call_ready(cs);
}

static void *dispatcher(void *arg)
{
	struct egpu_ctx *ctx = arg;
	struct call_state *cs = call_get(ctx);

	while (!__atomic_load_n(&cs->stop, __ATOMIC_ACQUIRE)) {
		if (poll_wait(dispatcher_wake, cs, CALL_THREAD_WAKE_MS) &&
		    call_drain(ctx) < 0)
			log_msg(&ctx->log, EGPU_LOG_WARN, "%s", egpu_errmsg());
	}
	return NULL;
}

/* Start the dispatcher if it should run and does not (thread_lock held). */
static int dispatcher_start(struct egpu_ctx *ctx, struct call_state *cs)
{
	int rc;

	if (cs->running || cs->how != EGPU_DISPATCH_THREAD || !cs->r.ring)
		return 0;
	__atomic_store_n(&cs->stop, 0, __ATOMIC_RELEASE);
	rc = pthread_create(&cs->thread, NULL, dispatcher, ctx);
	if (rc)
		return err_set(EGPU_ENOMEM, "cannot start the user helper "
			       "dispatcher thread: %s", strerror(rc));
	cs->running = true;
	return 0;
}

static void dispatcher_stop(struct call_state *cs)
{
	if (!cs->running)
		return;
	__atomic_store_n(&cs->stop, 1, __ATOMIC_RELEASE);
	pthread_join(cs->thread, NULL);
	cs->running = false;
}

int call_ring_module(struct egpu_ctx *ctx, bool calls, struct ptx_text *out)
{
	struct call_state *cs = call_state(ctx);
	int err;

	if (!cs)
		return EGPU_ENOMEM;
	pthread_mutex_lock(&cs->thread_lock);
	err = ctx_ring_make(ctx, &cs->r, calls, "call", CALL_RING_BYTES);
	if (!err)
		err = dispatcher_start(ctx, cs);
	if (!err)
		*out = ctx_ring_module(&cs->r, "egpu_dev_call_ring",
				       "call ring");
	pthread_mutex_unlock(&cs->thread_lock);
	return err;
}

void call_ctx_free(struct egpu_ctx *ctx)
{
	struct call_state *cs = ctx->calls;

	if (!cs)
		return;
	dispatcher_stop(cs);
	call_drain(ctx);
	ctx_ring_free(&cs->r);
	pthread_mutex_destroy(&cs->lock);
	pthread_mutex_destroy(&cs->thread_lock);
	free(cs);
	ctx->calls = NULL;
}

/* ---- API ---- */

int egpu_helper_set_dispatch(egpu_ctx *ctx, enum egpu_helper_dispatch how)
{
	struct call_state *cs;
	int err;

	if (!ctx)
		return err_set(EGPU_EINVAL, "egpu_helper_set_dispatch: NULL context");
	if (how != EGPU_DISPATCH_THREAD && how != EGPU_DISPATCH_POLL)
		return err_set(EGPU_EINVAL, "egpu_helper_set_dispatch: unknown "
			       "mode %d", (int)how);
	cs = call_state(ctx);
	if (!cs)
		return EGPU_ENOMEM;
	pthread_mutex_lock(&cs->thread_lock);
	cs->how = how;
	if (how == EGPU_DISPATCH_POLL)
		dispatcher_stop(cs);
	err = dispatcher_start(ctx, cs);
	pthread_mutex_unlock(&cs->thread_lock);
	return err;
}

int egpu_helper_poll(egpu_ctx *ctx, int timeout_ms)
{
	int n;

	if (!ctx)
		return err_set(EGPU_EINVAL, "egpu_helper_poll: NULL context");
	n = call_drain(ctx);
	if (n || !timeout_ms || !call_ring(call_get(ctx)))
		return n;
	return poll_wait(call_ready, call_get(ctx), timeout_ms) ?
	       call_drain(ctx) : 0;
}

uint64_t egpu_helper_drops(const egpu_ctx *ctx)
{
	struct event_ring *ring = ctx ? call_ring(call_get(ctx)) : NULL;

	return ring ? ring_drops(ring) : 0;
}
