/* SPDX-License-Identifier: MIT */
/*
 * The code inserted at one attach site: build a struct egpu_kernel_ctx if
 * a probe reads it, and run each probe with (generic ctx address, ctx
 * size): a copy of its body (inline.c), or a call. Everything lives in
 * its own { } scope with registers named after a prefix no application
 * name uses; a guarded ret/exit is skipped over with the inverse guard, so
 * probes run exactly when the exit is taken.
 *
 * The ctx lives in .shared memory, one per site: its bytes are the same
 * for every thread of the launch, so every thread may store them without
 * a barrier (no thread can read a different value), and nothing leaves the
 * SM. Per-thread .local memory would write through to L2: measured 4x the
 * time of a one-element-per-thread kernel on an H100, against +10% here.
 */
#include <stddef.h>
#include <stdio.h>

#include "egpu/ctx.h"
#include "ptx/instr.h"

/* The ctx is written as two 16-byte vectors: {kernel_id, params} and
 * {params_size | attach << 32, site | reserved << 32}. */
_Static_assert(offsetof(struct egpu_kernel_ctx, params) == 8 &&
		       offsetof(struct egpu_kernel_ctx, params_size) == 16 &&
		       offsetof(struct egpu_kernel_ctx, attach) == 20 &&
		       offsetof(struct egpu_kernel_ctx, site) == 24 &&
		       sizeof(struct egpu_kernel_ctx) == 32,
	       "the stores below follow struct egpu_kernel_ctx");

/* %P_rd3 = ctx.params: generic address of the first parameter, or 0. */
static void load_params(struct strbuf *sb, const struct probe_site *s)
{
	const struct ptx_func *k = s->kernel;
	const char *p = s->prefix;

	if (!k->nparams) {
		sb_printf(sb, "\tmov.u64 \t%%%s_rd3, 0;\n", p);
		return;
	}
	sb_printf(sb, "\tmov.u64 \t%%%s_rd3, %.*s;\n", p,
		  (int)s->m->toks[k->params[0].name].len,
		  tok_text(s->m, k->params[0].name));
	sb_printf(sb, "\tcvta.param.u64 \t%%%s_rd3, %%%s_rd3;\n", p, p);
}

static void store_pair(struct strbuf *sb, const char *p, unsigned off)
{
	sb_printf(sb, "\tst.shared.v2.u64 \t[%%%s_rd0+%u], {%%%s_rd2, %%%s_rd3};\n",
		  p, off, p, p);
}

static void build_ctx(struct strbuf *sb, const struct probe_site *s)
{
	const char *p = s->prefix;
	uint64_t attach = s->point == EGPU_ATTACH_ENTRY ? EGPU_CTX_ENTRY :
							  EGPU_CTX_EXIT;

	sb_printf(sb, "\t.shared .align 16 .b8 \t%%%s_ctx[%zu];\n", p,
		  sizeof(struct egpu_kernel_ctx));
	sb_printf(sb, "\t.reg .b64 \t%%%s_rd<6>;\n", p);
	sb_printf(sb, "\tmov.u64 \t%%%s_rd0, %%%s_ctx;\n", p, p);
	sb_printf(sb, "\tcvta.shared.u64 \t%%%s_rd1, %%%s_rd0;\n", p, p);
	sb_printf(sb, "\tmov.u64 \t%%%s_rd2, %u;\n", p, s->kernel_id);
	load_params(sb, s);
	store_pair(sb, p, 0);
	sb_printf(sb, "\tmov.u64 \t%%%s_rd2, %llu;\n", p,
		  (unsigned long long)(s->kernel->param_bytes | attach << 32));
	sb_printf(sb, "\tmov.u64 \t%%%s_rd3, %u;\n", p, s->site);
	store_pair(sb, p, 16);
	sb_printf(sb, "\tmov.u64 \t%%%s_rd4, %zu;\n", p,
		  sizeof(struct egpu_kernel_ctx));
}

/* Probes that never read their ctx get (NULL, 0): nothing to build. */
static void no_ctx(struct strbuf *sb, const struct probe_site *s)
{
	const char *p = s->prefix;

	sb_printf(sb, "\t.reg .b64 \t%%%s_rd<6>;\n", p);
	sb_printf(sb, "\tmov.u64 \t%%%s_rd1, 0;\n", p);
	sb_printf(sb, "\tmov.u64 \t%%%s_rd4, 0;\n", p);
}

void put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/* The site's ctx as build_ctx() stores it, but for ctx.params (zero). */
static void ctx_image(const struct probe_site *s, uint8_t *img)
{
	put_le(img, s->kernel_id, 8);
	put_le(img + 8, 0, 8);
	put_le(img + 16, s->kernel->param_bytes, 4);
	put_le(img + 20, s->point == EGPU_ATTACH_ENTRY ? EGPU_CTX_ENTRY :
							 EGPU_CTX_EXIT, 4);
	put_le(img + 24, s->site, 4);
	put_le(img + 28, 0, 4);
}

/*
 * The copy of probe @i's body: its names are "PREFIX_KERNEL_eSITE_I" (x
 * for exits) plus their own, so every site and probe has its own.
 */
static void inline_call(struct strbuf *sb, const struct probe_site *s,
			size_t i)
{
	const struct ptx_func *k = s->kernel;
	char name[64], ctx[32], len[32];
	uint8_t image[sizeof(struct egpu_kernel_ctx)];
	struct ctx_dyn params = { .cvta = "param" };
	struct inline_site at = { .name = name, .depot = s->depot, .ctx = ctx,
				  .len = len, .layout = &ctx_layout_kernel,
				  .dyn = &params };

	if (s->calls[i].fold) {
		ctx_image(s, image);
		at.image = image;
		if (k->nparams) {
			params.name = tok_text(s->m, k->params[0].name);
			params.len = (int)s->m->toks[k->params[0].name].len;
		}
	}
	snprintf(name, sizeof(name), "%s_%u_%c%u_%zu", s->prefix, s->kernel_id,
		 s->point == EGPU_ATTACH_ENTRY ? 'e' : 'x', s->site, i);
	snprintf(ctx, sizeof(ctx), "%%%s_rd1", s->prefix);
	snprintf(len, sizeof(len), "%%%s_rd4", s->prefix);
	sb_printf(sb, "\t// inlined %s\n", s->calls[i].func);
	emit_inlined(sb, s->calls[i].body, &at);
}

void emit_probe_site(struct strbuf *sb, const struct probe_site *s)
{
	const char *p = s->prefix;
	const char *what = s->point == EGPU_ATTACH_ENTRY ? "entry" : "exit";
	/* All threads of a warp are converged at kernel entry only. */
	const char *call = s->point == EGPU_ATTACH_ENTRY ? "call.uni" : "call";
	const struct ptx_stmt *g = s->guard;
	size_t i;

	sb_printf(sb, "// begin egpu %s probes\n", what);
	if (g)
		sb_printf(sb, "\t@%s%.*s bra \t$%s_skip_%u_%u;\n",
			  g->pred_neg ? "" : "!",
			  (int)s->m->toks[g->pred].len, tok_text(s->m, g->pred),
			  p, s->kernel_id, s->site);
	sb_adds(sb, "\t{\n");
	if (s->need_ctx)
		build_ctx(sb, s);
	else
		no_ctx(sb, s);
	for (i = 0; i < s->ncalls; i++) {
		if (s->calls[i].body)
			inline_call(sb, s, i);
		else
			sb_printf(sb, "\t%s \t(%%%s_rd5), %s, (%%%s_rd1, %%%s_rd4);\n",
				  call, p, s->calls[i].func, p, p);
	}
	sb_adds(sb, "\t}\n");
	if (g)
		sb_printf(sb, "$%s_skip_%u_%u:\n", p, s->kernel_id, s->site);
	sb_printf(sb, "\t// end egpu %s probes\n\t", what);
}
