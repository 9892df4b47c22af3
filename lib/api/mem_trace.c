/* SPDX-License-Identifier: MIT */
/*
 * egpu_mem_trace_enable(): the splicer's trace mode (docs/events.md, "The
 * splicer's trace mode"). Instrumenting then adds one request that makes
 * the splicer record each selected access in the ring's spans itself
 * (ptx/trace_site.c), and links in the device runtime, whose span code
 * (device/span_trace.cuh) takes what the inline code leaves to it.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "cuda/cu.h"
#include "egpu/bpf_maps.h"
#include "egpu/ctx.h"
#include "maps/span_layout.h"

/*
 * The module being instrumented as it came, compiled by the driver the
 * first time a traced kernel asks for its untraced registers
 * (ptx_trace.plain_regs).
 */
struct plain_module {
	struct egpu_ctx *ctx;
	const char *ptx;
	CUmodule mod;
	bool tried;
};

struct mem_trace_state {
	struct ptx_trace req;
	struct egpu_map *ring;
	char *kernel;
	uint32_t mem_spaces;
	uint32_t mem_kinds;
	int32_t runtime_regs; /* egpu_mem_trace_opts.runtime_max_registers */
	bool plain_caps;      /* caps from the untraced registers */
	struct plain_module plain;
};

/* The device runtime's registers compiled apart, by default (docs/events.md,
 * "The runtime compiled apart": vecadd's own code needs 30). */
#define RUNTIME_REGS_DEFAULT 32

int egpu_mem_trace_enable(egpu_ctx *ctx, egpu_map *ring,
			  const struct egpu_mem_trace_opts *opts)
{
	const char *kernel;
	struct mem_trace_state *t;
	uint32_t max_regs;
	char *k;

	if (!ctx || !ring)
		return err_set(EGPU_EINVAL, "egpu_mem_trace_enable: NULL argument");
	if (OPTS_VALID(opts, egpu_mem_trace_opts, "egpu_mem_trace_enable"))
		return EGPU_EINVAL;
	if (!ring->ring || ring->obj->ctx != ctx)
		return err_set(EGPU_EINVAL,
			       "egpu_mem_trace_enable: map '%s' is not a ring map of this context",
			       ring->spec->name);
	max_regs = OPTS_GET(opts, max_registers, 0);
	if (max_regs > PTX_REGS_MAX && max_regs != EGPU_MAX_REGISTERS_ANY)
		return err_set(EGPU_EINVAL,
			       "egpu_mem_trace_enable: max_registers %u: a thread has at most %u (EGPU_MAX_REGISTERS_ANY: no cap)",
			       max_regs, PTX_REGS_MAX);
	kernel = OPTS_GET(opts, kernel, NULL);
	k = strdup(kernel ? kernel : "*");
	t = ctx->mem_trace ? ctx->mem_trace : calloc(1, sizeof(*t));
	if (!k || !t) {
		free(k);
		if (t != ctx->mem_trace)
			free(t);
		return err_set(EGPU_ENOMEM, "egpu_mem_trace_enable: out of memory");
	}
	free(t->kernel);
	*t = (struct mem_trace_state){
		.ring = ring, .kernel = k,
		.mem_spaces = OPTS_GET(opts, mem_spaces, 0) ?:
			      1u << EGPU_SPACE_GLOBAL,
		.mem_kinds = OPTS_GET(opts, mem_kinds, 0),
		.runtime_regs = OPTS_GET(opts, runtime_max_registers, 0),
	};
	t->plain_caps = !max_regs;
	t->req.max_registers = max_regs == EGPU_MAX_REGISTERS_ANY ? 0 : max_regs;
	ctx->mem_trace = t;
	return 0;
}

static uint32_t plain_regs(void *user, const char *name)
{
	struct plain_module *pm = user;
	int regs = 0;

	if (!pm->tried) {
		pm->tried = true;
		if (cu_module_load_ptx(pm->ptx, &pm->mod)) {
			pm->mod = NULL;
			log_msg(&pm->ctx->log, EGPU_LOG_WARN,
				"traced kernels not capped at their untraced registers, compiling the module as it came failed: %s",
				egpu_errmsg());
		}
	}
	if (pm->mod && cu_func_regs(pm->mod, name, &regs))
		regs = 0;
	return regs > 0 ? (uint32_t)regs : 0;
}

void mem_trace_module_begin(struct egpu_ctx *ctx, const char *ptx)
{
	struct mem_trace_state *t = ctx->mem_trace;
	unsigned floor = mem_trace_runtime_regs(ctx);
	int regs = 0, threads = 0;

	if (!t || !t->plain_caps || ctx->offline || !floor ||
	    cu_device_attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
			   &regs) ||
	    cu_device_attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
			   &threads))
		return;
	t->plain = (struct plain_module){ .ctx = ctx, .ptx = ptx };
	t->req.plain_regs = plain_regs;
	t->req.plain_user = &t->plain;
	t->req.sm_regs = (uint32_t)regs;
	t->req.sm_threads = (uint32_t)threads;
	t->req.reg_floor = floor;
}

void mem_trace_module_end(struct egpu_ctx *ctx)
{
	struct mem_trace_state *t = ctx->mem_trace;

	if (!t || !t->req.plain_regs)
		return;
	if (t->plain.mod)
		cu()->cuModuleUnload(t->plain.mod);
	t->plain = (struct plain_module){ 0 };
	t->req.plain_regs = NULL;
	t->req.plain_user = NULL;
}

/*
 * What the site's inline claim folds (trace_site.c): where the shard of
 * an SM keeps its counters and records, as span_claim finds them from
 * the ring's struct dev_ring @v at @desc (the map's data; offline, its
 * handle, a placeholder), and the sizes of the spans it asks for
 * (span_fold_sizes: span_claim's, at most half a shard). None for a ring
 * too small for a span. A lossless ring folds too: the inline claim takes
 * only what has room, and one that finds none calls the runtime, which
 * waits for room and tries again (span_claim_again).
 */
static void fold_claim(uint64_t desc, const struct dev_ring *v,
		       struct ptx_trace *tr)
{
	uint32_t most = v->max_record / SPAN_SLOT;
	struct span_fold sizes = span_fold_sizes(most, v->mask + 1);

	if (most < sizes.least)
		return;
	tr->claim.shards = v->shards;
	tr->claim.prod_off = offsetof(struct ring_counters, prod);
	tr->claim.cons_off = offsetof(struct ring_counters, cons_seen);
	tr->claim.mask = v->mask;
	tr->claim.tag = span_ring_tag(desc);
	tr->claim.skip_flags = RING_COMMIT | RING_DISCARD;
	/* as span_claim sizes a span for a record of one slot */
	tr->claim.least = sizes.least;
	tr->claim.first = sizes.first;
	tr->claim.most = sizes.most;
	if (!(v->flags & RING_IN_DEVICE_MEMORY)) { /* the ring itself */
		tr->claim.ctr = desc;
		tr->claim.data = v->data;
		tr->claim.hdr_flags = RING_SPAN;
		return;
	}
	tr->claim.ctr = ring_shard_counters(v, 0);
	tr->claim.ctr_step = RING_LINE;
	tr->claim.data = ring_shard_data(v, 0);
	tr->claim.data_step = v->stride;
	tr->claim.hdr_flags = RING_SPAN | RING_RESERVED_LOCAL;
}

/*
 * Where an inline publish counts its span (a ring in GPU memory, as
 * span_publish does): the published-bytes words of its shards, which
 * shard holds a span (by its address, span_shard_at, exact where the
 * shards' records and pads span less than 2^31 bytes: all but a 1 GiB
 * ring on a GPU of more than 250 SMs, whose spans the publish leaves
 * uncounted, as in host memory), and the header's RING_COUNTED.
 */
static void fold_done(const struct dev_ring *v, struct ptx_trace *tr)
{
	struct span_shard_div dv;

	/* A ring in host memory has no shards' stride (0). */
	if (!(v->flags & RING_IN_DEVICE_MEMORY) ||
	    (uint64_t)v->shards * v->stride >= 1ull << 31)
		return;
	dv = span_shard_div_of(v->stride);
	tr->done.word = ring_shard_done(v, 0);
	tr->done.step = ring_shard_done(v, 1) - ring_shard_done(v, 0);
	tr->done.data = ring_shard_data(v, 0);
	tr->done.m = dv.m;
	tr->done.k = dv.k;
	tr->span_flags |= RING_COUNTED;
}

int mem_trace_request(struct egpu_ctx *ctx, struct ptx_attach *reqs,
		      size_t *nreq, unsigned *needs)
{
	struct mem_trace_state *t = ctx->mem_trace;
	struct dev_ring v;
	int err;

	if (!t)
		return 0;
	err = map_gpu_handle(t->ring, &t->req.ring);
	if (err) {
		err_prefix("egpu_mem_trace_enable's ring");
		return err;
	}
	/* Moved to the GPU now: in GPU memory when the map asked for it. */
	t->req.sys_fence = !(t->ring->spec->flags & EGPU_F_RING_DEVICE);
	t->req.lossless = t->ring->spec->flags & EGPU_F_RING_LOSSLESS;
	t->req.span_flags = RING_COMMIT | RING_SPAN;
	t->req.hdr_size = RING_HDR_SIZE;
	memset(&t->req.claim, 0, sizeof(t->req.claim));
	memset(&t->req.done, 0, sizeof(t->req.done));
	ring_gpu_view(t->ring->ring, t->req.ring, &v);
	fold_claim(t->ring->obj->ctx->offline ? t->req.ring :
		   dev_map_data(t->ring->dev), &v, &t->req);
	fold_done(&v, &t->req);
	reqs[(*nreq)++] = (struct ptx_attach){
		.kernel = t->kernel, .point = EGPU_ATTACH_MEM,
		.trace = &t->req, .label = "mem trace",
		.mem_spaces = t->mem_spaces, .mem_kinds = t->mem_kinds,
	};
	*needs |= JIT_NEED_RUNTIME;
	return 0;
}

unsigned mem_trace_runtime_regs(const struct egpu_ctx *ctx)
{
	const struct mem_trace_state *t = ctx->mem_trace;
	int32_t regs = t ? t->runtime_regs : 0;
	unsigned n = regs ? (unsigned)regs : RUNTIME_REGS_DEFAULT;

	if (regs < 0)
		return 0;
	/* a kernel capped lower refuses to call a function that uses more */
	if (t && t->req.max_registers && t->req.max_registers < n)
		n = t->req.max_registers;
	return n;
}

void mem_trace_free(struct egpu_ctx *ctx)
{
	if (ctx->mem_trace)
		free(ctx->mem_trace->kernel);
	free(ctx->mem_trace);
	ctx->mem_trace = NULL;
}
