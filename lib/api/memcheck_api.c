/* SPDX-License-Identifier: MIT */
/*
 * egpu_memcheck: the checker in-process (docs/memcheck.md, "In-process").
 * The allocation table, its GPU side and the report are the attach
 * agent's (lib/memcheck); here they are told of allocations by the
 * caller instead of the driver's hooks, and enabled in a context through
 * egpu_memcheck_enable()'s machinery (memcheck.c), which also hands this
 * checker the names of the sites it instruments.
 */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "cuda/cu.h"
#include "memcheck/memcheck_collect.h"
#include "memcheck/memcheck_dev.h"
#include "memcheck/memcheck_globals.h"
#include "memcheck/memcheck_names.h"
#include "memcheck/memcheck_report.h"
#include "memcheck/memcheck_table.h"

#define DEFAULT_ALLOCS 65536u

struct egpu_memcheck {
	CUcontext cu_ctx;         /* where its buffers live */
	struct mc_dev *dev;
	struct mc_table *table;
	struct mc_report *report;
	struct mc_names names;    /* the sites of the attached context */
	egpu_ctx *ctx;            /* attached to; NULL when none (any more) */
	bool attached;            /* ever: its sites' names are that context's */
	uint32_t drained;         /* log records taken */
	bool contain;
};

/* mc_report_opts.where: the bad access against the table as it is now. */
static void where(void *user, const struct mc_violation *v, char *buf,
		  size_t n)
{
	const struct egpu_memcheck *mc = user;

	mc_table_describe(mc->table, v->addr, v->size, buf, n);
}

static bool site(void *user, uint32_t num, struct mc_site *out)
{
	struct egpu_memcheck *mc = user;

	return mc_names_site(&mc->names, num, out);
}

static int make(struct egpu_memcheck *mc, uint32_t max_allocs,
		uint32_t max_reports)
{
	struct mc_report_opts ro = { .sz = sizeof(ro), .max_shown = max_reports,
				     .site = site, .where = where, .user = mc };
	struct mc_backend be;
	int err = cu_ctx_current(&mc->cu_ctx);

	if (!err)
		err = mc_dev_new(max_allocs, NULL, &mc->dev);
	if (err)
		return err;
	be = mc_dev_backend(mc->dev);
	mc->table = mc_table_new(&be);
	mc->report = mc->table ? mc_report_new(&ro) : NULL;
	return mc->report ? 0 : EGPU_ENOMEM;
}

egpu_memcheck *egpu_memcheck_new(const struct egpu_memcheck_new_opts *opts)
{
	struct egpu_memcheck *mc;

	if (OPTS_VALID(opts, egpu_memcheck_new_opts, "egpu_memcheck_new"))
		return NULL;
	mc = calloc(1, sizeof(*mc));
	if (!mc) {
		err_set(EGPU_ENOMEM, "egpu_memcheck_new: out of memory");
		return NULL;
	}
	mc->contain = OPTS_GET(opts, contain, false);
	if (make(mc, OPTS_GET(opts, max_allocs, 0) ?: DEFAULT_ALLOCS,
		 OPTS_GET(opts, max_reports, 0))) {
		egpu_memcheck_free(mc);
		return NULL;
	}
	return mc;
}

/* Make the checker's CUDA context current, *@prev the caller's, which
 * leave_ctx() restores. */
static int enter_ctx(const struct egpu_memcheck *mc, CUcontext *prev)
{
	int err = cu_check(cu()->cuCtxGetCurrent(prev),
			   "memcheck: the current CUDA context");

	return err ? err : cu_ctx_set_current(mc->cu_ctx);
}

static void leave_ctx(CUcontext prev)
{
	if (prev)
		cu_ctx_set_current(prev);
}

void egpu_memcheck_free(egpu_memcheck *mc)
{
	CUcontext prev = NULL;

	if (!mc)
		return;
	if (mc->ctx)
		memcheck_free(mc->ctx); /* sets mc->ctx to NULL */
	/* Stream-ordered frees' host functions name the table, and kernels
	 * may still read the buffers. A context gone took them with it. */
	if (mc->dev && !enter_ctx(mc, &prev)) {
		cu()->cuCtxSynchronize();
		mc_dev_free(mc->dev);
		leave_ctx(prev);
	}
	mc_report_free(mc->report);
	mc_table_free(mc->table);
	mc_names_clear(&mc->names);
	free(mc);
}

int egpu_memcheck_attach(egpu_ctx *ctx, egpu_memcheck *mc)
{
	EGPU_OPTS(egpu_memcheck_opts, o, .contain = false);
	struct memcheck_user user;
	CUcontext cur;
	int err;

	if (!ctx || !mc)
		return err_set(EGPU_EINVAL, "egpu_memcheck_attach: NULL argument");
	if (mc->attached && mc->ctx != ctx)
		return err_set(EGPU_EBUSY, "egpu_memcheck_attach: the checker serves another context, now or before (its sites are numbered there)");
	err = cu_ctx_current(&cur);
	if (!err && cur != mc->cu_ctx)
		err = err_set(EGPU_EINVAL, "egpu_memcheck_attach: the checker lives in another CUDA context; make that one current");
	if (!err)
		err = ctx_bind_cuda(ctx);
	if (err)
		return err;
	o.contain = mc->contain;
	o.index_cell = mc_dev_cell(mc->dev);
	o.states = mc_dev_states(mc->dev);
	o.counts = mc_dev_counts(mc->dev);
	o.log = mc_dev_log(mc->dev);
	o.hints = mc_dev_hints(mc->dev);
	user = (struct memcheck_user){ .names = &mc->names, .ctx = &mc->ctx };
	err = memcheck_enable_for(ctx, &o, &user);
	if (!err) {
		mc->ctx = ctx;
		mc->attached = true;
	}
	return err;
}

/* A change to the table, made with the checker's CUDA context current
 * (the backend allocates indexes and writes state words there). */
struct change {
	enum { ADD, FREE, MAP, UNMAP } op;
	uint64_t base, size;
	enum egpu_memcheck_kind kind;
	bool ordered;  /* in @stream's order */
	void *stream;
};

static int apply(egpu_memcheck *mc, const struct change *c)
{
	CUcontext prev = NULL;
	void *s = c->stream ? c->stream : CU_STREAM_LEGACY;
	int err = enter_ctx(mc, &prev);

	if (err)
		return err;
	if (c->op == ADD && c->ordered)
		err = mc_table_alloc_async(mc->table, c->base, c->size,
					   (enum mc_kind)c->kind, s,
					   mc_dev_capturing(mc->dev, c->stream));
	else if (c->op == ADD)
		err = mc_table_alloc(mc->table, c->base, c->size,
				     (enum mc_kind)c->kind);
	else if (c->op == FREE)
		err = mc_table_free_at(mc->table, c->base, c->ordered ? s : NULL,
				       c->ordered &&
				       mc_dev_capturing(mc->dev, c->stream));
	else if (c->op == MAP)
		err = mc_table_map(mc->table, c->base, c->size);
	else
		err = mc_table_unmap(mc->table, c->base, c->size);
	leave_ctx(prev);
	return err;
}

static int track(egpu_memcheck *mc, struct change c, const char *fn)
{
	if (!mc)
		return err_set(EGPU_EINVAL, "%s: NULL checker", fn);
	if ((unsigned)c.kind >= EGPU_MEMCHECK_KIND_COUNT)
		return err_set(EGPU_EINVAL, "%s: no allocation kind %d", fn,
			       (int)c.kind);
	if (c.kind == EGPU_MEMCHECK_VMM && c.ordered)
		return err_set(EGPU_EINVAL, "%s: cuMemMap is not stream-ordered; use egpu_memcheck_track", fn);
	if (c.kind == EGPU_MEMCHECK_VMM)
		c.op = MAP;
	return apply(mc, &c);
}

int egpu_memcheck_track(egpu_memcheck *mc, uint64_t base, uint64_t size,
			enum egpu_memcheck_kind kind)
{
	return track(mc, (struct change){ ADD, base, size, kind, false, NULL },
		     "egpu_memcheck_track");
}

int egpu_memcheck_track_async(egpu_memcheck *mc, uint64_t base, uint64_t size,
			      enum egpu_memcheck_kind kind, void *stream)
{
	return track(mc, (struct change){ ADD, base, size, kind, true, stream },
		     "egpu_memcheck_track_async");
}

static int untrack(egpu_memcheck *mc, struct change c, const char *fn)
{
	if (!mc)
		return err_set(EGPU_EINVAL, "%s: NULL checker", fn);
	return apply(mc, &c);
}

int egpu_memcheck_untrack(egpu_memcheck *mc, uint64_t base)
{
	return untrack(mc, (struct change){ .op = FREE, .base = base },
		       "egpu_memcheck_untrack");
}

int egpu_memcheck_untrack_async(egpu_memcheck *mc, uint64_t base, void *stream)
{
	return untrack(mc, (struct change){ .op = FREE, .base = base,
					    .ordered = true, .stream = stream },
		       "egpu_memcheck_untrack_async");
}

int egpu_memcheck_untrack_range(egpu_memcheck *mc, uint64_t base,
				uint64_t size)
{
	return untrack(mc, (struct change){ .op = UNMAP, .base = base,
					    .size = size },
		       "egpu_memcheck_untrack_range");
}

static int module_global(void *user, const char *name, uint64_t *addr,
			 size_t *size)
{
	CUdeviceptr p = 0;
	CUresult res = cu()->cuModuleGetGlobal(&p, size, user, name);

	*addr = p;
	return res;
}

int egpu_memcheck_track_globals(egpu_memcheck *mc, uint64_t function,
				const char *ptx, size_t len)
{
	CUcontext prev = NULL;
	CUmodule mod = NULL;
	int err;

	if (!mc || !function || !ptx)
		return err_set(EGPU_EINVAL, "egpu_memcheck_track_globals: NULL argument");
	err = enter_ctx(mc, &prev);
	if (err)
		return err;
	err = cu_check(cu()->cuFuncGetModule(&mod, (CUfunction)(uintptr_t)function),
		       "egpu_memcheck_track_globals: the function's module");
	if (!err)
		err = mc_table_globals(mc->table, ptx, len, module_global, mod);
	leave_ctx(prev);
	return err;
}

int egpu_memcheck_poll(egpu_memcheck *mc)
{
	CUcontext prev = NULL;
	uint32_t lost;
	int err;

	if (!mc)
		return err_set(EGPU_EINVAL, "egpu_memcheck_poll: NULL checker");
	err = mc_collect_log(mc->dev, mc->report, &mc->drained);
	if (!err)
		err = enter_ctx(mc, &prev);
	if (!err) {
		err = mc_collect_counts(mc->dev, mc->report, &lost);
		leave_ctx(prev);
	}
	if (err > 0) /* a CUDA error */
		err = err_set(EGPU_ECUDA, "egpu_memcheck_poll: reading the sites' counts: CUDA error %d",
			      err);
	return err ? err : (int)mc_report_sites(mc->report);
}

int egpu_memcheck_report_at(egpu_memcheck *mc, uint32_t i,
			    struct egpu_memcheck_report *out)
{
	struct egpu_memcheck_report r = { .sz = sizeof(r) };
	const struct mc_violation *v;
	struct mc_site s;

	if (!mc || !out || out->sz < offsetofend(struct egpu_memcheck_report, sz))
		return err_set(EGPU_EINVAL, "egpu_memcheck_report_at: NULL argument or out->sz not set");
	if (i >= mc_report_sites(mc->report))
		return err_set(EGPU_ENOENT, "egpu_memcheck_report_at: %u sites, no site %u",
			       (unsigned)mc_report_sites(mc->report), i);
	mc_report_entry(mc->report, i, &v, &r.where, &r.count);
	if (mc_report_site_name(mc->report, v->site, &s)) {
		r.kernel = s.kernel;
		r.file = s.file;
		r.line = s.line;
	}
	r.site = v->site;
	r.kind = v->kind;
	r.space = v->space;
	r.size = v->size;
	r.addr = v->addr;
	memcpy(r.block, v->block, sizeof(r.block));
	memcpy(r.thread, v->thread, sizeof(r.thread));
	/* The caller's struct may be older (smaller) than ours. */
	r.sz = out->sz < sizeof(r) ? out->sz : sizeof(r);
	memcpy(out, &r, r.sz);
	return 0;
}

uint64_t egpu_memcheck_errors(const egpu_memcheck *mc)
{
	return mc ? mc_report_total(mc->report) : 0;
}

int egpu_memcheck_text(egpu_memcheck *mc, bool json, char **text, size_t *len)
{
	if (!mc || !text)
		return err_set(EGPU_EINVAL, "egpu_memcheck_text: NULL argument");
	*text = mc_report_text(mc->report, json);
	if (!*text)
		return err_set(EGPU_ENOMEM, "egpu_memcheck_text: out of memory");
	if (len)
		*len = strlen(*text);
	return 0;
}
