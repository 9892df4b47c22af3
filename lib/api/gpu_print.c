/* SPDX-License-Identifier: MIT */
/*
 * Printing from the GPU: bpf_trace_printk, bpf_trace_vprintk and bpf_puts
 * leave records in the context's print ring (lib/device/print.cuh); the
 * host formats them when it polls (print_format.c), with the format string
 * taken from its copy of the object's global data (the record holds the
 * device address of the format, which lies in a .rodata map), and hands
 * out one line per record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "cuda/cu.h"

#define PRINT_RING_BYTES (4u << 20)

struct print_state {
	pthread_mutex_t lock;    /* one consumer of the ring at a time */
	struct ctx_ring r;       /* its ring made when a probe first prints */
	egpu_print_fn fn;
	void *user;
};

/*
 * A consumer thread may poll while another instruments: the state and its
 * ring are published with release stores once complete, read with acquire.
 */
static struct print_state *print_get(const struct egpu_ctx *ctx)
{
	return __atomic_load_n(&ctx->print, __ATOMIC_ACQUIRE);
}

static struct event_ring *print_ring(const struct egpu_ctx *ctx)
{
	struct print_state *ps = print_get(ctx);

	return ps ? __atomic_load_n(&ps->r.ring, __ATOMIC_ACQUIRE) : NULL;
}

static void print_init(void *ps)
{
	pthread_mutex_init(&((struct print_state *)ps)->lock, NULL);
}

static void print_fini(void *ps)
{
	pthread_mutex_destroy(&((struct print_state *)ps)->lock);
}

static struct print_state *print_state(struct egpu_ctx *ctx)
{
	return lazy_make((void **)&ctx->print, sizeof(struct print_state),
			 print_init, print_fini, "printing");
}

int print_ring_module(struct egpu_ctx *ctx, bool prints, struct ptx_text *out)
{
	struct print_state *ps = print_state(ctx);
	int err;

	if (!ps)
		return EGPU_ENOMEM;
	pthread_mutex_lock(&ps->lock);
	err = ctx_ring_make(ctx, &ps->r, prints, "print", PRINT_RING_BYTES);
	if (!err)
		*out = ctx_ring_module(&ps->r, "egpu_dev_print_ring",
				       "print ring");
	pthread_mutex_unlock(&ps->lock);
	return err;
}

/* ---- delivery ---- */

/* Host copy of the global data at device address @addr, and its length. */
static const char *resolve(void *user, uint64_t addr, size_t *len,
			   const char **obj_name)
{
	struct egpu_ctx *ctx = user;

	for (struct egpu_obj *obj = ctx->objs; obj; obj = obj->next) {
		for (size_t i = 0; i < obj->spec.map_cnt; i++) {
			const struct egpu_map *m = &obj->maps[i];
			uint64_t base;

			if (!m->dev || !m->spec->init)
				continue;
			base = dev_map_value_base(m->dev);
			if (base && addr >= base && addr - base < m->spec->init_len) {
				*len = m->spec->init_len - (addr - base);
				*obj_name = obj->name;
				return (const char *)m->spec->init + (addr - base);
			}
		}
	}
	return NULL;
}

static void deliver(struct egpu_ctx *ctx, const char *line,
		    const struct egpu_print_info *info)
{
	struct print_state *ps = print_get(ctx);
	struct egpu_kernel_info k = { .sz = sizeof(k) };
	char buf[1200];

	if (ps->fn) {
		ps->fn(ps->user, line, info);
		return;
	}
	/* the kernel's demangled name, else the object's (or ?) */
	if (info->kernel_id == EGPU_PRINT_NO_KERNEL ||
	    egpu_kernel_info(ctx, info->kernel_id, &k))
		k.demangled = info->obj ? info->obj : "?";
	snprintf(buf, sizeof(buf), "%s block (%u,%u,%u) thread (%u,%u,%u): %s",
		 k.demangled, info->block[0], info->block[1],
		 info->block[2], info->thread[0], info->thread[1],
		 info->thread[2], line);
	/* Program output the user asked for: not filtered by log_level. */
	if (ctx->log.fn)
		ctx->log.fn(EGPU_LOG_INFO, buf, ctx->log.user);
	else
		fprintf(stderr, "egpu: %s\n", buf);
}

static int print_record(void *user, const void *data, size_t size)
{
	struct egpu_ctx *ctx = user;
	struct egpu_print_info info;
	struct strbuf sb;
	int err;

	sb_init(&sb);
	err = print_format(data, size, resolve, ctx, &sb, &info);
	if (!err)
		deliver(ctx, sb.buf ? sb.buf : "", &info);
	sb_free(&sb);
	return err;
}

int print_drain(struct egpu_ctx *ctx)
{
	struct print_state *ps = print_get(ctx);
	int n = 0;

	if (!ps)
		return 0;
	pthread_mutex_lock(&ps->lock);
	if (ps->r.ring)
		n = ring_consume(ps->r.ring, print_record, ctx, NULL);
	pthread_mutex_unlock(&ps->lock);
	return n;
}

void print_ctx_free(struct egpu_ctx *ctx)
{
	struct print_state *ps = ctx->print;

	if (!ps)
		return;
	print_drain(ctx);
	ctx_ring_free(&ps->r);
	pthread_mutex_destroy(&ps->lock);
	free(ps);
	ctx->print = NULL;
}

/* ---- API ---- */

int egpu_print_set_callback(egpu_ctx *ctx, egpu_print_fn fn, void *user)
{
	struct print_state *ps;

	if (!ctx)
		return err_set(EGPU_EINVAL, "egpu_print_set_callback: NULL context");
	ps = print_state(ctx);
	if (!ps)
		return EGPU_ENOMEM;
	pthread_mutex_lock(&ps->lock);
	ps->fn = fn;
	ps->user = user;
	pthread_mutex_unlock(&ps->lock);
	return 0;
}

static bool print_ready(void *arg)
{
	struct egpu_ctx *ctx = arg;

	struct event_ring *ring = print_ring(ctx);

	return ring && ring_ready(ring);
}

int egpu_print_poll(egpu_ctx *ctx, int timeout_ms)
{
	int n;

	if (!ctx)
		return err_set(EGPU_EINVAL, "egpu_print_poll: NULL context");
	n = print_drain(ctx);
	if (n || !timeout_ms || !print_ring(ctx))
		return n;
	return poll_wait(print_ready, ctx, timeout_ms) ? print_drain(ctx) : 0;
}

uint64_t egpu_print_drops(const egpu_ctx *ctx)
{
	struct event_ring *ring = ctx ? print_ring(ctx) : NULL;

	return ring ? ring_drops(ring) : 0;
}
