/* SPDX-License-Identifier: MIT */
/*
 * egpu_instrument_ptx() and egpu_module_load(): translate every attached
 * program for the GPU, splice the calls into the application's PTX and link
 * the probes and the device runtime in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "core/helpers.h"
#include "core/target.h"
#include "cuda/cu.h"
#include "device/device.h"
#include "image/image.h"

/* The probes of one instrumentation: PTX modules and attach requests. */
struct probe_set {
	struct ptx_attach *reqs;
	struct ptx_text *mods; /* one per distinct program (the context's
				* translations: jit_cache.c), the runtime, its
				* print ring definition */
	char **names;          /* probe function name per request */
	size_t nreq;
	size_t nprog;
	size_t nruntime;       /* modules after the programs' */
	unsigned needs;        /* enum jit_need of the programs' PTX */
};

static void probe_set_free(struct probe_set *ps)
{
	for (size_t i = 0; i < ps->nreq; i++)
		free(ps->names[i]);
	free(ps->reqs);
	free(ps->mods);
	free(ps->names);
}

/* Probe function name of @prog, unique in the context. */
static char *probe_name(struct egpu_ctx *ctx, struct egpu_prog *prog)
{
	char buf[300];

	if (!prog->probe_id)
		prog->probe_id = ++ctx->next_probe_id;
	snprintf(buf, sizeof(buf), "__egpu_probe%u_%s", prog->probe_id,
		 prog->spec->name);
	return strdup(buf);
}

/* Whether @prog may end its thread: it calls exit_thread (507). */
static bool prog_may_exit(const struct egpu_prog *prog)
{
	const struct prog_spec *p = prog->spec;

	for (size_t i = 0; i < p->insn_cnt; i++)
		if (p->insns[i].code == (BPF_JMP | BPF_CALL) &&
		    !p->insns[i].src_reg && p->insns[i].imm == HELPER_EXIT_THREAD)
			return true;
	return false;
}

/* Whether one of the first @upto links already brought @prog in. */
static int prog_seen(const struct egpu_ctx *ctx, size_t upto,
		     const struct egpu_prog *prog)
{
	const struct egpu_link *l = ctx->links;

	for (size_t i = 0; i < upto && l; i++, l = l->next)
		if (l->prog == prog)
			return 1;
	return 0;
}

/*
 * The target the probes are translated for: the context's, or the
 * module's where its PTX targets an older GPU (PyTorch ships compute_75
 * PTX beside its SASS), since PTX links only into a module of its own
 * target or a newer one.
 */
static void probe_target(const struct egpu_ctx *ctx, const char *app_ptx,
			 char *sm, size_t len)
{
	unsigned app = image_ptx_target(app_ptx);

	if (app && app < target_sm(ctx->sm))
		snprintf(sm, len, "sm_%u", app);
	else
		snprintf(sm, len, "%s", ctx->sm);
}

/*
 * A module for a GPU older than the device runtime's floor (XLA ships
 * sm_50 PTX) gets its .target raised to the context's GPU, which the
 * driver compiles it for anyway (ptx_retarget). Where the module forbids
 * that, it keeps its target, *@why says why, and the probes are
 * translated for that target: enough for probes that need no runtime.
 */
static int retarget_old(struct egpu_ctx *ctx, char **text, size_t *len,
			char *why, size_t why_len)
{
	unsigned app = image_ptx_target(*text);
	struct strbuf sb;
	int err;

	if (!app || app >= image_ptx_target(device_runtime_ptx))
		return 0;
	sb_init(&sb);
	err = ptx_retarget(*text, *len, target_sm(ctx->sm), &sb);
	if (err) {
		sb_free(&sb);
		if (err != EGPU_ENOTSUP)
			return err;
		snprintf(why, why_len, "%s", egpu_errmsg());
		return 0;
	}
	log_msg(&ctx->log, EGPU_LOG_INFO,
		"instrumenting: the module's .target sm_%u raised to sm_%u",
		app, target_sm(ctx->sm));
	free(*text);
	*text = sb_detach(&sb, len);
	return *text ? 0 : err_set(EGPU_ENOMEM, "instrumenting: out of memory");
}

static int probe_set_build(struct egpu_ctx *ctx, struct probe_set *ps,
			   const char *sm)
{
	size_t n = 0, i = 0;
	int err = 0;

	for (struct egpu_link *l = ctx->links; l; l = l->next)
		n++;
	ps->reqs = calloc(n + 2, sizeof(*ps->reqs)); /* + memcheck's, trace's */
	ps->mods = calloc(n + RUNTIME_MODULES_MAX + MEMCHECK_MODULES_MAX,
			  sizeof(*ps->mods));
	ps->names = calloc(n + 1, sizeof(*ps->names));
	if (!ps->reqs || !ps->mods || !ps->names)
		return err_set(EGPU_ENOMEM, "instrumenting: out of memory");
	for (struct egpu_link *l = ctx->links; l && !err; l = l->next, i++) {
		ps->names[i] = probe_name(ctx, l->prog);
		if (!ps->names[i])
			return err_set(EGPU_ENOMEM, "instrumenting: out of memory");
		ps->nreq++;
		if (!prog_seen(ctx, i, l->prog))
			err = jit_cache_probe(ctx, l->prog, ps->names[i], sm,
					      &ps->mods[ps->nprog++], &ps->needs);
		ps->reqs[i] = (struct ptx_attach){ .kernel = l->kernel,
						   .point = l->at,
						   .func = ps->names[i],
						   .no_inline = ctx->no_inline,
						   .mem_inline_limit = ctx->mem_inline_limit,
						   .params_reach = l->prog->params_reach,
						   .may_exit = prog_may_exit(l->prog),
						   .mem_spaces = l->mem_spaces,
						   .mem_kinds = l->mem_kinds,
						   .label = l->prog->spec->name,
						   .strict_match = l->strict };
	}
	if (!err) /* after the probes: they see an access before the check */
		memcheck_request(ctx, ps->reqs, &ps->nreq);
	return err ? err : mem_trace_request(ctx, ps->reqs, &ps->nreq,
					     &ps->needs);
}

static bool mem_linked(const struct egpu_ctx *ctx)
{
	for (const struct egpu_link *l = ctx->links; l; l = l->next)
		if (l->at == EGPU_ATTACH_MEM)
			return true;
	return false;
}

static int fill_mem_sites(struct egpu_ctx *ctx, struct egpu_report *r)
{
	const struct ptx_report *pr = &ctx->last;
	struct egpu_mem_site *ms;

	free(ctx->last_mem_sites);
	ctx->last_mem_sites = ms = calloc(pr->nmem_sites + 1, sizeof(*ms));
	if (!ms)
		return err_set(EGPU_ENOMEM, "instrumenting: out of memory");
	for (size_t i = 0; i < pr->nmem_sites; i++) {
		const struct ptx_mem_site *s = &pr->mem_sites[i];

		ms[i] = (struct egpu_mem_site){
			.site = pr->site_base + (uint32_t)i,
			.kernel_id = s->kernel_id,
			.function = s->function, .text = s->text,
			.ptx_line = s->ptx_line, .line = s->line,
			.file = s->file, .size = s->size, .kind = s->kind,
			.space = s->space,
		};
	}
	r->mem_site_cnt = (uint32_t)pr->nmem_sites;
	r->mem_sites = ms;
	r->site_base = pr->site_base;
	r->mem_called = (uint32_t)pr->mem_called;
	if (!pr->nmem_sites && mem_linked(ctx))
		log_msg(&ctx->log, EGPU_LOG_WARN,
			"instrumenting: memory probes are attached, but the kernels they match (and their .funcs) have no memory instruction they select");
	if (pr->mem_skipped)
		log_msg(&ctx->log, EGPU_LOG_INFO,
			"instrumenting: %zu memory instructions of probed functions have no probe (ldmatrix, wgmma, call-sequence .param ...: docs/ptx.md)",
			pr->mem_skipped);
	if (pr->mem_called)
		log_msg(&ctx->log, EGPU_LOG_INFO,
			"instrumenting: %zu memory probes are called instead of copied in, to keep the module's growth under egpu_ctx_opts.mem_inline_limit",
			pr->mem_called);
	return 0;
}

static int fill_report(struct egpu_ctx *ctx, struct egpu_report *rep,
		       size_t nprog, double ms)
{
	const struct ptx_report *pr = &ctx->last;
	struct egpu_kernel_report *k;

	free(ctx->last_kernels);
	ctx->last_kernels = k = calloc(pr->nkernels + 1, sizeof(*k));
	if (!k)
		return err_set(EGPU_ENOMEM, "instrumenting: out of memory");
	EGPU_OPTS(egpu_report, r, .kernel_cnt = (uint32_t)pr->nkernels,
		  .programs = (uint32_t)nprog, .instrument_ms = ms, .kernels = k);
	for (size_t i = 0; i < pr->nkernels; i++) {
		const struct ptx_kernel_info *ki = &pr->kernels[i];

		k[i] = (struct egpu_kernel_report){
			.name = ki->name, .demangled = ki->demangled,
			.kernel_id = ki->id, .entry_points = ki->entry_points,
			.exit_points = ki->exit_points, .programs = ki->programs,
			.inlined = ki->inlined, .mem_points = ki->mem_points,
		};
		r.kernels_patched += ki->programs > 0;
		r.entry_points += ki->entry_points;
		r.exit_points += ki->exit_points;
	}
	if (fill_mem_sites(ctx, &r))
		return EGPU_ENOMEM;
	memcheck_sites(ctx, &r);
	r.warning_cnt = (uint32_t)pr->nwarnings;
	r.warnings = (const char *const *)pr->warnings;
	for (size_t i = 0; i < pr->nwarnings; i++)
		log_msg(&ctx->log, EGPU_LOG_WARN, "instrumenting: %s", pr->warnings[i]);
	if (rep) {
		/* The caller's struct may be older (smaller) than ours. */
		size_t sz = rep->sz < sizeof(r) ? rep->sz : sizeof(r);

		memcpy(rep, &r, sz);
		rep->sz = sz;
	}
	return 0;
}

int egpu_instrument_ptx(egpu_ctx *ctx, const char *ptx, size_t len,
			char **out, size_t *out_len, struct egpu_report *report)
{
	struct probe_set ps = { 0 };
	struct image_info info;
	struct kernel_numbering kn;
	struct strbuf sb;
	uint64_t t0 = now_ns();
	char *text, sm[sizeof(ctx->sm)], why[256] = "";
	int err;

	if (!ctx || !ptx || !out)
		return err_set(EGPU_EINVAL, "egpu_instrument_ptx: NULL argument");
	if (report && report->sz < sizeof(size_t))
		return err_set(EGPU_EINVAL, "egpu_instrument_ptx: report->sz not set");
	err = image_ptx(ptx, len, ctx->sm, &text, &len, &info);
	if (err)
		return err;
	sb_init(&sb);
	err = retarget_old(ctx, &text, &len, why, sizeof(why));
	if (!err) {
		probe_target(ctx, text, sm, sizeof(sm));
		err = kernels_numbering(ctx, text, len, &kn);
	}
	if (!err) /* the linked objects' maps, before their probes translate */
		err = ctx_maps_to_gpu(ctx);
	if (!err)
		err = probe_set_build(ctx, &ps, sm);
	if (!err)
		err = runtime_modules(ctx, ps.needs, &ps.mods[ps.nprog],
				      &ps.nruntime);
	if (!err) {
		size_t nmc;

		memcheck_modules(ctx, &ps.mods[ps.nprog + ps.nruntime], &nmc);
		ps.nruntime += nmc;
		ptx_report_free(&ctx->last);
		mem_trace_module_begin(ctx, text);
		err = ptx_instrument_num(text, len, ps.reqs, ps.nreq, ps.mods,
					 ps.nprog + ps.nruntime, &kn.num, &sb,
					 &ctx->last);
		mem_trace_module_end(ctx);
	}
	if (!err)
		err = fill_report(ctx, report, ps.nprog,
				  (double)(now_ns() - t0) / 1e6);
	probe_set_free(&ps);
	free(text);
	if (err) {
		if (*why)
			err_prefix("%s", why);
		sb_free(&sb);
		return err;
	}
	*out = sb_detach(&sb, out_len);
	return *out ? 0 : err_set(EGPU_ENOMEM, "instrumenting: out of memory");
}

int egpu_module_load(egpu_ctx *ctx, CUmodule *mod, const void *image,
		     size_t len)
{
	char *ptx = NULL;
	int err;

	if (!ctx || !mod || !image)
		return err_set(EGPU_EINVAL, "egpu_module_load: NULL argument");
	if (ctx->offline)
		return err_set(EGPU_EINVAL, "egpu_module_load: the context is offline (inspection only)");
	if (!cu())
		return EGPU_ENODEV;
	err = egpu_instrument_ptx(ctx, image, len, &ptx, NULL, NULL);
	if (err)
		return err;
	clock_ctx_start(ctx); /* probes are about to run */
	err = module_load_instrumented(ctx, ptx, mod);
	free(ptx);
	if (err)
		err_prefix("loading the instrumented PTX");
	return err;
}
