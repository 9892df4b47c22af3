/* SPDX-License-Identifier: MIT */
/*
 * The code before one memory instruction: its generic address into a
 * fresh register (base register or symbol, plus the offset, through
 * cvta for a state space), then each probe, a copy of its body with the
 * site's struct egpu_mem_ctx folded in (the address register, constants,
 * the text's symbol, a bulk copy's size register, a store's value), or a
 * call with a ctx built in the function's .local ctx. A store whose
 * probes read ctx.value first stores its source operand into a .local of
 * the site's scope (ctx.value: its address); one of at most 8 bytes from
 * a register or a constant gives read_value its bytes in the register
 * %P_mb (core/mem_ctx.h), which costs a folded copy no memory at all. A guarded instruction is skipped
 * over with the inverse guard, so the probes run exactly when it does.
 * All of it lives in its own { } scope: nothing stays live across the
 * instruction.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem_ctx.h"
#include "egpu/ctx.h"
#include "ptx/memplan.h"
/* The ctx is stored as {addr, text}, {kernel_id | site << 32,
 * size | kind << 32 | space << 48}, {line | reserved << 32}, value. */
_Static_assert(offsetof(struct egpu_mem_ctx, text) == 8 &&
		       offsetof(struct egpu_mem_ctx, kernel_id) == 16 &&
		       offsetof(struct egpu_mem_ctx, site) == 20 &&
		       offsetof(struct egpu_mem_ctx, size) == 24 &&
		       offsetof(struct egpu_mem_ctx, kind) == 28 &&
		       offsetof(struct egpu_mem_ctx, space) == 30 &&
		       offsetof(struct egpu_mem_ctx, line) == 32 &&
		       offsetof(struct egpu_mem_ctx, value) == 40 &&
		       sizeof(struct egpu_mem_ctx) == 48,
	       "the stores below follow struct egpu_mem_ctx");

/* What the code of one site needs. */
/* What the trace's code at each site of a kernel knows of the others. */
struct trace_kernel {
	uint32_t first; /* slots of a lane's first span */
	bool shorts;    /* a site may store a short record */
};

struct site_code {
	const struct ptx_module *m;
	const struct mem_plan *p;
	const struct mem_site *s;
	uint32_t site;   /* index in the module: names its labels */
	uint32_t number; /* egpu_mem_ctx.site: site_base + index */
	const struct mem_names *nm;
	const struct mc_func *fn; /* the function's, for memcheck */
	int cache;                /* memcheck's range cache, or -1 */
	const struct mem_site *all; /* the function's sites ... */
	const int *group;         /* ... memcheck's groups of them ... */
	const int *hoist;         /* ... and their passed predicates */
	size_t nall;
	struct trace_kernel tk;   /* the trace's, in the site's kernel */
};

/* %P_m0 = generic address of the first byte accessed. */
static void put_address(struct strbuf *sb, const struct site_code *c)
{
	char reg[40];

	snprintf(reg, sizeof(reg), "%%%s_m0", c->nm->prefix);
	mem_op_address(sb, c->m, &c->s->op, reg);
}

static uint64_t kind_space(const struct mem_op *op)
{
	return (uint64_t)op->kind << 32 | (uint64_t)op->space << 48;
}

/* The site's ctx in the function's .local ctx: %P_m1 its generic address. */
static void build_ctx(struct strbuf *sb, const struct site_code *c)
{
	const struct mem_site *s = c->s;
	const char *p = c->nm->prefix;

	sb_printf(sb, "\tmov.u64 \t%%%s_m1, %s;\n", p, c->nm->mctx);
	if (s->need_text) {
		sb_printf(sb, "\tmov.u64 \t%%%s_m2, $%s_text_%u;\n", p, p, c->site);
		sb_printf(sb, "\tcvta.global.u64 \t%%%s_m2, %%%s_m2;\n", p, p);
	} else {
		sb_printf(sb, "\tmov.u64 \t%%%s_m2, 0;\n", p);
	}
	sb_printf(sb, "\tst.local.v2.u64 \t[%%%s_m1], {%%%s_m0, %%%s_m2};\n",
		  p, p, p);
	sb_printf(sb, "\tmov.u64 \t%%%s_m2, %llu;\n", p,
		  (unsigned long long)((uint64_t)c->number << 32 | s->kernel_id));
	if (s->op.size_reg >= 0) {
		sb_printf(sb, "\tcvt.u64.u32 \t%%%s_m3, %.*s;\n", p,
			  (int)c->m->toks[s->op.size_reg].len,
			  tok_text(c->m, (uint32_t)s->op.size_reg));
		sb_printf(sb, "\tor.b64 \t%%%s_m3, %%%s_m3, %llu;\n", p, p,
			  (unsigned long long)kind_space(&s->op));
	} else {
		sb_printf(sb, "\tmov.u64 \t%%%s_m3, %llu;\n", p,
			  (unsigned long long)(kind_space(&s->op) | s->op.size));
	}
	sb_printf(sb, "\tst.local.v2.u64 \t[%%%s_m1+16], {%%%s_m2, %%%s_m3};\n",
		  p, p, p);
	sb_printf(sb, "\tmov.u64 \t%%%s_m2, %u;\n", p, s->line);
	sb_printf(sb, "\tst.local.u64 \t[%%%s_m1+32], %%%s_m2;\n", p, p);
	if (s->need_value)
		sb_printf(sb, "\tmov.u64 \t%%%s_m2, %%%s_mv;\n"
			  "\tcvta.local.u64 \t%%%s_m2, %%%s_m2;\n", p, p, p, p);
	else
		sb_printf(sb, "\tmov.u64 \t%%%s_m2, 0;\n", p);
	sb_printf(sb, "\tst.local.u64 \t[%%%s_m1+40], %%%s_m2;\n", p, p);
	/* The tail: value_bits, value_len, value_at (= value). */
	if (s->need_bits)
		sb_printf(sb, "\tst.local.u64 \t[%%%s_m1+48], %%%s_mb;\n", p, p);
	else
		sb_printf(sb, "\tst.local.u64 \t[%%%s_m1+48], 0;\n", p);
	sb_printf(sb, "\tst.local.u64 \t[%%%s_m1+56], %u;\n", p,
		  s->need_bits ? s->op.size : 0);
	sb_printf(sb, "\tst.local.u64 \t[%%%s_m1+64], %%%s_m2;\n", p, p);
	sb_printf(sb, "\tcvta.local.u64 \t%%%s_m1, %%%s_m1;\n", p, p);
	sb_printf(sb, "\tmov.u64 \t%%%s_m4, %zu;\n", p,
		  sizeof(struct egpu_mem_ctx));
}

static void ctx_image(const struct mem_site *s, uint32_t site, uint8_t *img)
{
	put_le(img, 0, 16);
	put_le(img + 16, s->kernel_id, 4);
	put_le(img + 20, site, 4);
	put_le(img + 24, s->op.size, 4);
	put_le(img + 28, s->op.kind, 2);
	put_le(img + 30, s->op.space, 2);
	put_le(img + 32, s->line, 4);
	put_le(img + 36, 0, 4);
	put_le(img + 40, 0, 8);
	put_le(img + 48, 0, 8);
	put_le(img + 56, s->value_in_reg ? s->op.size : 0, 8);
	put_le(img + 64, 0, 8);
}

static void inline_call(struct strbuf *sb, const struct site_code *c,
			const struct probe_call *call, size_t i)
{
	const struct mem_site *s = c->s;
	const char *p = c->nm->prefix;
	char name[64], addr[32], text[48], ctx[32], len[32], value[32],
		bits[32];
	uint8_t image[sizeof(struct mem_site_ctx)];
	struct ctx_dyn dyn[6] = {
		{ .name = addr, .len = -1, .bits = 64 },
		{ .cvta = "global" },
		{ .bits = 32 },
		{ .cvta = "local" },
		{ .bits = 64 },
		{ .cvta = "local" },
	};
	struct inline_site at = { .name = name, .depot = c->nm->depot,
				  .ctx = ctx, .len = len,
				  .layout = &ctx_layout_mem, .dyn = dyn };

	snprintf(name, sizeof(name), "%s_m%u_%zu", p, c->site, i);
	snprintf(addr, sizeof(addr), "%%%s_m0", p);
	snprintf(ctx, sizeof(ctx), "%%%s_m1", p);
	snprintf(len, sizeof(len), "%%%s_m4", p);
	if (call->fold) {
		ctx_image(s, c->number, image);
		at.image = image;
		if (s->need_text) {
			snprintf(text, sizeof(text), "$%s_text_%u", p, c->site);
			dyn[1].name = text;
			dyn[1].len = -1;
		}
		if (s->op.size_reg >= 0) {
			dyn[2].name = tok_text(c->m, (uint32_t)s->op.size_reg);
			dyn[2].len = (int)c->m->toks[s->op.size_reg].len;
		}
		if (s->need_value) {
			snprintf(value, sizeof(value), "%%%s_mv", p);
			dyn[3].name = dyn[5].name = value;
			dyn[3].len = dyn[5].len = -1;
		}
		if (s->need_bits) {
			snprintf(bits, sizeof(bits), "%%%s_mb", p);
			dyn[4].name = bits;
			dyn[4].len = -1;
		}
	}
	sb_printf(sb, "\t// inlined %s\n", call->func);
	emit_inlined(sb, call->body, &at);
}

/* The store's source operand into the scope's .local %P_mv. */
static void put_value(struct strbuf *sb, const struct site_code *c)
{
	const struct ptx_module *m = c->m;
	const struct mem_op *op = &c->s->op;
	uint32_t from = m->toks[op->value].off;

	sb_printf(sb, "\t.local .align 16 .b8 \t%%%s_mv[%u];\n", c->nm->prefix,
		  op->size);
	sb_adds(sb, "\tst.local");
	if (op->vec > 1)
		sb_printf(sb, ".v%u", op->vec);
	sb_printf(sb, "%.*s \t[%%%s_mv], %.*s;\n", (int)m->toks[op->type].len,
		  tok_text(m, op->type), c->nm->prefix,
		  (int)(tok_end(m, op->value_end - 1) - from), m->text + from);
}

/*
 * %P_mb = the store's source operand, zero-extended: through a bit-typed
 * register of its width, which any register type moves to (a store's
 * narrower type writes the low bytes; the tail's value_len says how many).
 */
static void put_bits(struct strbuf *sb, const struct site_code *c)
{
	const struct ptx_module *m = c->m;
	const struct mem_op *op = &c->s->op;
	const char *p = c->nm->prefix, *src = tok_text(m, op->value);
	int n = (int)m->toks[op->value].len;
	int bits = mem_value_bits(m, m->items[c->s->item].func, op);

	sb_printf(sb, "\t.reg .b64 \t%%%s_mb;\n", p);
	if (bits == 64) {
		sb_printf(sb, "\tmov.b64 \t%%%s_mb, %.*s;\n", p, n, src);
		return;
	}
	sb_printf(sb, "\t.reg .b%d \t%%%s_mw;\n\tmov.b%d \t%%%s_mw, %.*s;\n"
		  "\tcvt.u64.u%d \t%%%s_mb, %%%s_mw;\n", bits, p, bits, p, n, src,
		  bits, p, p);
}

/* The site's memcheck request, or NULL. */
static const struct mem_req *memcheck_of(const struct mem_plan *p,
					 const struct mem_site *s)
{
	for (size_t i = 0; i < s->ncalls; i++)
		if (mem_plan_call(p, s, i)->r->memcheck)
			return mem_plan_call(p, s, i);
	return NULL;
}

/* The site's trace request, or NULL. */
static const struct mem_req *trace_of(const struct mem_plan *p,
				      const struct mem_site *s)
{
	for (size_t i = 0; i < s->ncalls; i++)
		if (mem_plan_call(p, s, i)->r->trace)
			return mem_plan_call(p, s, i);
	return NULL;
}

/* Whether the site's access is skipped when its check fails. */
static bool contained(const struct site_code *c)
{
	const struct mem_req *q = memcheck_of(c->p, c->s);

	return q && q->r->memcheck->contain &&
	       mc_site_checked(&c->s->op, c->fn);
}

/* What memcheck's code at the site needs, @q its request. */
static struct mc_site_code mc_code(const struct site_code *c,
				   const struct mem_req *q)
{
	return (struct mc_site_code){ .m = c->m, .s = c->s,
				      .prefix = c->nm->prefix,
				      .site = c->site, .number = c->number,
				      .mc = q->r->memcheck,
				      .mc_find = q->mc_find,
				      .mc_window = q->mc_window,
				      .fn = c->fn, .cache = c->cache,
				      .all = c->all, .group = c->group,
				      .hoist = c->hoist, .nall = c->nall,
				      .contain = contained(c) };
}

static void emit_call(struct strbuf *sb, const struct site_code *c, size_t i)
{
	const struct probe_call *call = mem_plan_probe(c->p, c->s, i);
	const struct mem_req *q = mem_plan_call(c->p, c->s, i);
	const char *p = c->nm->prefix;

	if (q->r->memcheck) {
		struct mc_site_code mc = mc_code(c, q);

		mc_emit_check(sb, &mc);
	} else if (mem_plan_call(c->p, c->s, i)->r->trace) {
		const struct ptx_module *m = c->m;
		struct tr_site_code tr = { .m = m, .s = c->s, .prefix = p,
					   .site = c->site, .number = c->number,
					   .tr = mem_plan_call(c->p, c->s, i)->r->trace,
					   .kernel = m->items[c->s->item].func->entry,
					   .first = c->tk.first,
					   .shorts = c->tk.shorts };

		tr_emit_site(sb, &tr);
	} else if (call->body) {
		inline_call(sb, c, call, i);
	} else {
		sb_printf(sb, "\tcall \t(%%%s_m5), %s, (%%%s_m1, %%%s_m4);\n",
			  p, call->func, p, p);
	}
}

static void emit_site(struct strbuf *sb, const struct site_code *c)
{
	const struct ptx_module *m = c->m;
	const struct ptx_stmt *st =
		&m->items[c->s->item].func->stmts[c->s->stmt];
	const char *p = c->nm->prefix;
	int hoisted = c->hoist[c->s - c->all];

	sb_adds(sb, "// begin egpu mem probes\n");
	if (contained(c))
		mc_emit_open(sb, p);
	if (st->pred >= 0)
		sb_printf(sb, "\t@%s%.*s bra \t$%s_mskip_%u;\n",
			  st->pred_neg ? "" : "!", (int)m->toks[st->pred].len,
			  tok_text(m, (uint32_t)st->pred), p, c->site);
	if (hoisted >= 0) {
		struct mc_site_code mc = mc_code(c, memcheck_of(c->p, c->s));

		mc_emit_hoist_skip(sb, &mc);
	}
	sb_printf(sb, "\t{\n\t.reg .b64 \t%%%s_m<6>;\n", p);
	if (c->s->need_value)
		put_value(sb, c);
	if (c->s->need_bits)
		put_bits(sb, c);
	put_address(sb, c);
	if (c->s->need_ctx)
		build_ctx(sb, c);
	else
		sb_printf(sb, "\tmov.u64 \t%%%s_m1, 0;\n\tmov.u64 \t%%%s_m4, 0;\n",
			  p, p);
	for (size_t i = 0; i < c->s->ncalls; i++)
		emit_call(sb, c, i);
	sb_adds(sb, "\t}\n");
	if (hoisted >= 0)
		mc_emit_hoist_label(sb, p, c->site);
	if (st->pred >= 0)
		sb_printf(sb, "$%s_mskip_%u:\n", p, c->site);
	if (contained(c))
		mc_emit_skip(sb, p, c->site);
	sb_adds(sb, "\t// end egpu mem probes\n\t");
}

/* Containment's end, after the instruction. */
static int emit_after(struct edits *e, const struct site_code *c)
{
	const struct ptx_stmt *st =
		&c->m->items[c->s->item].func->stmts[c->s->stmt];
	struct strbuf *sb;

	if (!contained(c))
		return 0;
	sb = edit_at(e, tok_end(c->m, st->last - 1), 0);
	if (!sb)
		return err_set(EGPU_ENOMEM, "PTX: out of memory for edits");
	mc_emit_after(sb, c->m, c->s, c->nm->prefix, c->site);
	return 0;
}

/* The sites of function @item: [*lo, *hi). */
static const struct mem_site *item_sites(const struct mem_plan *p,
					 uint32_t item, size_t *lo, size_t *hi)
{
	const struct mem_site *s;
	size_t n = mem_plan_sites(p, &s), a = 0, b = n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (s[mid].item < item)
			a = mid + 1;
		else
			b = mid;
	}
	for (b = a; b < n && s[b].item == item; b++)
		;
	*lo = a;
	*hi = b;
	return s;
}

/* Whether memcheck may check site @s with others of its group: a
 * shared access off a base, uncontained. */
static bool groupable(const struct mem_plan *p, const struct mem_site *s,
		      const struct mc_func *fn)
{
	const struct mem_req *q = memcheck_of(p, s);

	return q && !q->r->memcheck->contain &&
	       s->op.space == EGPU_SPACE_SHARED &&
	       mc_site_checked(&s->op, fn) && s->op.size_reg < 0 &&
	       s->op.base_is != BASE_IMM;
}

/* Site @i of @s [@lo, ...), with its group (@group, by site - @lo): its
 * passed predicate (mc_site_hoist), where it is checked alone or as its
 * group's head, uncontained, with no probe but memcheck's. */
static int plan_hoist(const struct mem_plan *p, const struct ptx_module *m,
		      const struct mem_site *s, size_t lo, size_t i,
		      const int *group, const int *hoist, struct mc_func *fn)
{
	const struct mem_req *q = memcheck_of(p, &s[i]);
	int g = group[i - lo];

	if (!q || q->r->memcheck->contain || s[i].ncalls != 1 ||
	    g < 0 || (size_t)g != i - lo)
		return -1;
	return mc_site_hoist(fn, m, s + lo, i - lo, hoist);
}

/* memcheck's plan for the sites [@lo, @hi) of a function: range caches,
 * groups and passed predicates (@cache, @group, @hoist, by site - @lo),
 * its entry's code (mc_emit_entry) and the predicates' resets. */
static int plan_memcheck(const struct mem_plan *p, const struct ptx_module *m,
			 const struct mem_site *s, size_t lo, size_t hi,
			 struct mc_func *fn, int *cache, int *group,
			 int *hoist, const char *prefix, struct edits *e)
{
	const struct ptx_func *f = m->items[s[lo].item].func;
	bool *want = calloc(hi - lo + 1, sizeof(*want));
	struct strbuf *sb;
	int err;

	if (!want)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	for (size_t i = lo; i < hi; i++) {
		const struct mem_req *q = memcheck_of(p, &s[i]);

		cache[i - lo] = q ? mc_site_plan(fn, &s[i]) : -1;
		if (q)
			fn->cell = q->r->memcheck->cell;
		want[i - lo] = groupable(p, &s[i], fn);
	}
	mc_plan_groups(m, s + lo, hi - lo, want, group);
	free(want);
	err = fn->shared ? mc_index_names(m, f, fn) : 0;
	if (err)
		return err;
	for (size_t i = lo; i < hi; i++)
		hoist[i - lo] = plan_hoist(p, m, s, lo, i, group, hoist, fn);
	if (!mc_func_has_entry(fn))
		return 0;
	sb = edit_at(e, m->toks[func_entry_stmt(m, f)->first].off, 0);
	if (!sb)
		return err_set(EGPU_ENOMEM, "PTX: out of memory for edits");
	mc_emit_entry(sb, prefix, fn);
	return mc_emit_resets(m, fn, s + lo, hi - lo, hoist, prefix, e);
}

/*
 * A kernel tracing at one of the sites [@lo, @hi): its lanes' span
 * registers, flushed at its exits and, when a .func's site traces too,
 * before its calls.
 */
static int plan_trace(const struct mem_plan *p, const struct ptx_module *m,
		      uint32_t item, const struct mem_site *s, size_t lo,
		      size_t hi, const char *prefix, struct edits *e)
{
	const struct mem_req *q = NULL;
	const struct mem_site *all;
	size_t n = mem_plan_sites(p, &all);
	bool calls = false;

	for (size_t i = lo; i < hi && !q; i++)
		q = trace_of(p, &s[i]);
	if (!q || !m->items[item].func->entry)
		return 0;
	for (size_t i = 0; i < n && !calls; i++)
		calls = !m->items[all[i].item].func->entry && trace_of(p, &all[i]);
	return tr_emit_kernel(m, item, prefix, q->r->trace, calls, e);
}

/*
 * The trace in kernel @item (its sites [@lo, @hi), @fn its loops). A
 * lane's first span: where no traced site is in a loop, each runs at most
 * once a warp, in order, so the first span is sized to hold a record of
 * each (a straight-line kernel's warps then claim one span, and no empty
 * slots); else the ring's first size.
 */
static struct trace_kernel trace_kernel(const struct mem_plan *p,
					const struct ptx_module *m,
					uint32_t item, const struct mem_site *s,
					size_t lo, size_t hi,
					const struct mc_func *fn)
{
	const struct mem_req *q = NULL;
	struct trace_kernel k = { 0 };
	uint32_t halves = 0;
	bool loop = false;

	for (size_t i = lo; i < hi; i++) {
		const struct mem_req *t = trace_of(p, &s[i]);
		struct tr_site_code c = {
			.m = m, .s = &s[i],
			.number = mem_plan_site_base(p) + (uint32_t)i,
			.kernel = m->items[item].func->entry,
		};

		if (!t)
			continue;
		q = t;
		loop |= fn->in_loop[s[i].stmt];
		k.shorts |= tr_may_be_short(&c);
		halves = tr_record_end(&c, halves);
	}
	if (q)
		k.first = loop ? q->r->trace->claim.first :
			  tr_first_slots(q->r->trace, halves);
	return k;
}

int mem_emit_item(const struct mem_plan *p, const struct ptx_module *m,
		  uint32_t item, const struct mem_names *names,
		  struct edits *e)
{
	size_t lo, hi;
	const struct mem_site *s = item_sites(p, item, &lo, &hi);
	struct mc_func fn;
	int *cache = calloc(3 * (hi - lo) + 1, sizeof(*cache));
	int *group = cache + (hi - lo), *hoist = group + (hi - lo);
	int err = mc_func_make(m, m->items[item].func, &fn);
	struct trace_kernel tk = { 0 };

	if (!err && !cache)
		err = err_set(EGPU_ENOMEM, "PTX: out of memory");
	if (!err && hi > lo)
		err = plan_memcheck(p, m, s, lo, hi, &fn, cache, group,
				    hoist, names->prefix, e);
	if (!err)
		err = plan_trace(p, m, item, s, lo, hi, names->prefix, e);
	if (!err)
		tk = trace_kernel(p, m, item, s, lo, hi, &fn);
	for (size_t i = lo; i < hi && !err; i++) {
		const struct ptx_stmt *st = &m->items[item].func->stmts[s[i].stmt];
		struct site_code c = { .m = m, .p = p, .s = &s[i],
				       .site = (uint32_t)i,
				       .number = mem_plan_site_base(p) + (uint32_t)i,
				       .nm = names, .fn = &fn,
				       .cache = cache[i - lo],
				       .hoist = hoist, .all = s + lo,
				       .group = group, .nall = hi - lo,
				       .tk = tk };
		struct strbuf *sb = edit_at(e, m->toks[st->first].off, 0);

		if (!sb)
			err = err_set(EGPU_ENOMEM, "PTX: out of memory for edits");
		else
			emit_site(sb, &c);
		if (!err)
			err = emit_after(e, &c);
	}
	free(cache);
	mc_func_free(&fn);
	return err;
}

bool mem_item_needs_ctx(const struct mem_plan *p, uint32_t item)
{
	size_t lo, hi;
	const struct mem_site *s = item_sites(p, item, &lo, &hi);

	for (size_t i = lo; i < hi; i++)
		if (s[i].need_ctx)
			return true;
	return false;
}

int mem_item_local(const struct mem_plan *p, uint32_t item,
		   struct func_locals *l)
{
	size_t lo, hi;
	const struct mem_site *s = item_sites(p, item, &lo, &hi);
	int err = 0;

	for (size_t i = lo; i < hi && !err; i++)
		for (size_t k = 0; k < s[i].ncalls && !err; k++)
			err = calls_local(mem_plan_probe(p, &s[i], k), 1, l);
	return err;
}

/* The text of site @s's instruction, as in the input. */
static void site_text(const struct ptx_module *m, const struct mem_site *s,
		      const char **text, size_t *len)
{
	const struct ptx_stmt *st = &m->items[s->item].func->stmts[s->stmt];

	*text = m->text + m->toks[st->first].off;
	*len = tok_end(m, st->last - 1) - m->toks[st->first].off;
}

int mem_emit_texts(const struct mem_plan *p, const struct ptx_module *m,
		   const char *prefix, uint32_t off, struct edits *e)
{
	const struct mem_site *s;
	size_t n = mem_plan_sites(p, &s);
	struct strbuf *sb = NULL;

	for (size_t i = 0; i < n; i++) {
		const char *text;
		size_t len;

		if (!s[i].need_text)
			continue;
		if (!sb) {
			sb = edit_at(e, off, 0);
			if (!sb)
				return err_set(EGPU_ENOMEM, "PTX: out of memory for edits");
			sb_adds(sb, "\n\n// begin egpu mem texts\n");
		}
		site_text(m, &s[i], &text, &len);
		sb_printf(sb, ".global .align 1 .b8 $%s_text_%zu[%zu] = {", prefix,
			  i, len + 1);
		for (size_t k = 0; k < len; k++)
			sb_printf(sb, "%u, ", (unsigned char)text[k]);
		sb_adds(sb, "0};\n");
	}
	if (sb)
		sb_adds(sb, "// end egpu mem texts\n");
	return 0;
}

int mem_site_text(const struct mem_plan *p, const struct ptx_module *m,
		  size_t i, char **out)
{
	const struct mem_site *s;
	const char *text;
	size_t len;

	mem_plan_sites(p, &s);
	site_text(m, &s[i], &text, &len);
	*out = strndup(text, len);
	return *out ? 0 : err_set(EGPU_ENOMEM, "PTX: out of memory");
}
