/* SPDX-License-Identifier: MIT */
/*
 * The code inserted at one attach site: build a struct egpu_kernel_ctx in
 * .local memory and call each probe with (generic ctx address, ctx size).
 * Everything lives in its own { } scope with registers named after a
 * prefix no application name uses; a guarded ret/exit is skipped over with
 * the inverse guard, so probes run exactly when the exit is taken.
 */
#include <stddef.h>

#include "egpu/ctx.h"
#include "ptx/instr.h"

/* The stores below write params_size and attach as one 64-bit word. */
_Static_assert(offsetof(struct egpu_kernel_ctx, attach) ==
		       offsetof(struct egpu_kernel_ctx, params_size) + 4,
	       "params_size and attach share one 64-bit store");
_Static_assert(offsetof(struct egpu_kernel_ctx, reserved) ==
		       offsetof(struct egpu_kernel_ctx, site) + 4,
	       "site and reserved share one 64-bit store");
_Static_assert(sizeof(struct egpu_kernel_ctx) == 32, "ctx is 32 bytes");

static void store_word(struct strbuf *sb, const char *p, size_t off,
		       uint64_t value)
{
	sb_printf(sb, "\tmov.u64 \t%%%s_rd2, %llu;\n", p,
		  (unsigned long long)value);
	sb_printf(sb, "\tst.local.u64 \t[%%%s_rd0+%zu], %%%s_rd2;\n", p, off, p);
}

/* ctx.params: the generic address of the first parameter, or 0. */
static void store_params(struct strbuf *sb, const struct probe_site *s)
{
	const struct ptx_func *k = s->kernel;
	const char *p = s->prefix;

	if (!k->nparams) {
		store_word(sb, p, offsetof(struct egpu_kernel_ctx, params), 0);
		return;
	}
	sb_printf(sb, "\tmov.u64 \t%%%s_rd2, %.*s;\n", p,
		  (int)s->m->toks[k->params[0].name].len,
		  tok_text(s->m, k->params[0].name));
	sb_printf(sb, "\tcvta.param.u64 \t%%%s_rd2, %%%s_rd2;\n", p, p);
	sb_printf(sb, "\tst.local.u64 \t[%%%s_rd0+%zu], %%%s_rd2;\n", p,
		  offsetof(struct egpu_kernel_ctx, params), p);
}

static void build_ctx(struct strbuf *sb, const struct probe_site *s)
{
	const char *p = s->prefix;
	uint64_t attach = s->point == EGPU_ATTACH_ENTRY ? EGPU_CTX_ENTRY :
							  EGPU_CTX_EXIT;

	sb_printf(sb, "\t.local .align 8 .b8 \t%%%s_ctx[%zu];\n", p,
		  sizeof(struct egpu_kernel_ctx));
	sb_printf(sb, "\t.reg .b64 \t%%%s_rd<5>;\n", p);
	sb_printf(sb, "\tmov.u64 \t%%%s_rd0, %%%s_ctx;\n", p, p);
	sb_printf(sb, "\tcvta.local.u64 \t%%%s_rd1, %%%s_rd0;\n", p, p);
	store_word(sb, p, offsetof(struct egpu_kernel_ctx, kernel_id),
		   s->kernel_id);
	store_params(sb, s);
	store_word(sb, p, offsetof(struct egpu_kernel_ctx, params_size),
		   s->kernel->param_bytes | attach << 32);
	store_word(sb, p, offsetof(struct egpu_kernel_ctx, site), s->site);
	sb_printf(sb, "\tmov.u64 \t%%%s_rd3, %zu;\n", p,
		  sizeof(struct egpu_kernel_ctx));
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
	build_ctx(sb, s);
	for (i = 0; i < s->nfuncs; i++)
		sb_printf(sb, "\t%s \t(%%%s_rd4), %s, (%%%s_rd1, %%%s_rd3);\n",
			  call, p, s->funcs[i], p, p);
	sb_adds(sb, "\t}\n");
	if (g)
		sb_printf(sb, "$%s_skip_%u_%u:\n", p, s->kernel_id, s->site);
	sb_printf(sb, "\t// end egpu %s probes\n\t", what);
}
