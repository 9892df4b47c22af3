/* SPDX-License-Identifier: MIT */
/*
 * egpu memcheck's check at one memory site (docs/memcheck.md), emitted
 * by memsite.c where a request asks for it, after the site's generic
 * address is in %P_m0:
 * - global: the site's hint (the entry its last search found: core/
 *   memcheck_layout.h) answers when it names the current index and holds
 *   the access, live; else the search, egpu_dev_mc_find (lib/device/
 *   memcheck.cu: the allocation table's lookup), finds the live
 *   allocation holding [addr, addr + size), or sends the access; a site
 *   in a loop also keeps the allocation in two registers and tries again
 *   only when an access leaves it;
 * - shared: the access must end inside the block's shared memory, whose
 *   end (computed once at the function's entry) is the dynamic part's
 *   start (egpu_dev_mc_smem, an extern .shared array, placed after every
 *   static one) plus %dynamic_smem_size; in a loop that does not write
 *   their bases, a run of such sites is tested once, at its first, and
 *   then skipped until a base is written;
 * - local (kernels only: a .func may be handed its caller's frame): the
 *   access must lie inside the kernel's __local_depot, the frame nvcc
 *   gives every local array;
 * - generic: isspacep picks which of those applies; other windows pass.
 * A bad shared or local access is sent by egpu_dev_mc_window. Both
 * device functions are copied into the site (never called: a call makes
 * ptxas keep every live value across it), their ctx (struct
 * mc_site_ctx) folded into the site's words and registers. With
 * containment the verdict lives in %P_mcb, declared in a scope that also
 * holds the instruction: a bad access skips it, and a load or atomic
 * then zeroes its destinations.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/memcheck_layout.h"
#include "egpu/ctx.h"
#include "ptx/memplan.h"

/* The kernel's frame: its only .local, nvcc's __local_depot. */
static void find_frame(const struct ptx_module *m, const struct ptx_func *f,
		       struct mc_func *fn)
{
	uint32_t locals = 0;

	for (uint32_t i = 0; f->entry && i < f->nstmts; i++) {
		const struct ptx_stmt *st = &f->stmts[i];
		uint32_t t = st->op + 1;

		if (st->kind != ST_DECL || !tok_is(m, st->op, ".local"))
			continue;
		locals++;
		while (t < st->last && m->toks[t].kind != TOK_IDENT)
			t++;
		if (t + 3 < st->last && tok_is(m, t + 1, "[") &&
		    m->toks[t + 2].kind == TOK_INT && tok_is(m, t + 3, "]") &&
		    m->toks[t].len > 13 &&
		    !strncmp(tok_text(m, t), "__local_depot", 13)) {
			fn->depot = t;
			fn->depot_size = (uint32_t)strtoul(tok_text(m, t + 2),
							   NULL, 0);
		}
	}
	/* Other named .local variables: a frame of a form we do not know. */
	fn->frame_ok = fn->depot && locals == 1;
}

/* The label statement @t names, or -1. */
static int64_t label_at(const struct ptx_module *m, const struct ptx_func *f,
			const uint32_t *labels, size_t n, uint32_t t)
{
	for (size_t i = 0; i < n; i++)
		if (tok_same(m, f->stmts[labels[i]].first, t))
			return labels[i];
	return -1;
}

/* Statements a backward branch (to a label at or before them, from
 * after them) runs again: a loop's body. */
static int find_loops(const struct ptx_module *m, const struct ptx_func *f,
		      struct mc_func *fn)
{
	uint32_t *labels = calloc(f->nstmts + 1, sizeof(*labels));
	int32_t *delta = calloc(f->nstmts + 1, sizeof(*delta));
	size_t n = 0;
	int32_t depth = 0;

	fn->in_loop = calloc(f->nstmts + 1, 1);
	if (!labels || !delta || !fn->in_loop) {
		free(labels);
		free(delta);
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	}
	for (uint32_t i = 0; i < f->nstmts; i++)
		if (f->stmts[i].kind == ST_LABEL)
			labels[n++] = i;
	for (uint32_t j = 0; j < f->nstmts; j++) {
		const struct ptx_stmt *st = &f->stmts[j];
		int64_t i;

		if (st->kind != ST_INSN || !tok_is(m, st->op, "bra") ||
		    st->last < 2)
			continue;
		i = label_at(m, f, labels, n, st->last - 2); /* bra L ; */
		if (i >= 0 && i <= j) {
			delta[i]++;
			delta[j + 1]--;
		}
	}
	for (uint32_t i = 0; i < f->nstmts; i++) {
		depth += delta[i];
		fn->in_loop[i] = depth > 0;
	}
	free(labels);
	free(delta);
	return 0;
}

int mc_func_make(const struct ptx_module *m, const struct ptx_func *f,
		 struct mc_func *fn)
{
	*fn = (struct mc_func){ 0 };
	find_frame(m, f, fn);
	return find_loops(m, f, fn);
}

void mc_func_free(struct mc_func *fn)
{
	free(fn->in_loop);
	fn->in_loop = NULL;
	free(fn->named);
	fn->named = NULL;
}

/* Whether token @u of a statement lies outside its [ ] addresses, @depth
 * the brackets open before it (updated; 0 at the statement's start). */
static bool outside_address(const struct ptx_module *m, uint32_t u,
			    int *depth)
{
	*depth += tok_is(m, u, "[") - tok_is(m, u, "]");
	return !*depth;
}

/* Whether @t appears in statement @st outside its [ ] addresses (so
 * the statement may write it). */
static bool names_outside_address(const struct ptx_module *m,
				  const struct ptx_stmt *st, uint32_t t)
{
	int depth = 0;

	for (uint32_t u = st->first; u < st->last; u++)
		if (outside_address(m, u, &depth) && tok_same(m, u, t))
			return true;
	return false;
}

/* A token an instruction names outside its [ ] addresses. */
struct mc_named {
	const char *text;
	uint32_t len;
	uint32_t stmt;
};

static int named_cmp(const void *pa, const void *pb)
{
	const struct mc_named *a = pa, *b = pb;
	int c;

	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	c = memcmp(a->text, b->text, a->len);
	if (c)
		return c;
	return (a->stmt > b->stmt) - (a->stmt < b->stmt);
}

int mc_index_names(const struct ptx_module *m, const struct ptx_func *f,
		   struct mc_func *fn)
{
	size_t n = 0;

	for (uint32_t i = 0; i < f->nstmts; i++)
		if (f->stmts[i].kind == ST_INSN)
			n += f->stmts[i].last - f->stmts[i].first;
	free(fn->named);
	fn->nnamed = 0;
	fn->named = malloc((n + 1) * sizeof(*fn->named));
	if (!fn->named)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	for (uint32_t i = 0; i < f->nstmts; i++) {
		const struct ptx_stmt *st = &f->stmts[i];
		int depth = 0;

		for (uint32_t u = st->first; st->kind == ST_INSN && u < st->last;
		     u++)
			if (outside_address(m, u, &depth))
				fn->named[fn->nnamed++] = (struct mc_named){
					tok_text(m, u), m->toks[u].len, i };
	}
	qsort(fn->named, fn->nnamed, sizeof(*fn->named), named_cmp);
	return 0;
}

/* The first statement at or after @from naming @t outside an address
 * (fn->named), or UINT32_MAX. */
static uint32_t next_naming(const struct ptx_module *m,
			    const struct mc_func *fn, uint32_t t, uint32_t from)
{
	struct mc_named key = { tok_text(m, t), m->toks[t].len, from };
	size_t lo = 0, hi = fn->nnamed;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (named_cmp(&fn->named[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == fn->nnamed || fn->named[lo].len != key.len ||
	    memcmp(fn->named[lo].text, key.text, key.len))
		return UINT32_MAX;
	return fn->named[lo].stmt;
}

/* Whether the statements [@from, @to) of @f let a site at @to use the
 * value base register @base had at @from: straight code not writing it. */
static bool straight(const struct ptx_module *m, const struct ptx_func *f,
		     uint32_t from, uint32_t to, uint32_t base)
{
	static const char *const jumps[] = { "bra", "brx", "call", "ret",
					     "exit", "trap" };

	for (uint32_t i = from; i < to; i++) {
		const struct ptx_stmt *st = &f->stmts[i];

		if (st->kind == ST_LABEL || st->kind == ST_OPEN ||
		    st->kind == ST_CLOSE)
			return false;
		if (st->kind != ST_INSN)
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(jumps); k++)
			if (tok_is(m, st->op, jumps[k]))
				return false;
		if (names_outside_address(m, st, base))
			return false;
	}
	return true;
}

/* The member after head @h of its group, among the sites before @end;
 * @end if none. */
static size_t second_member(const int *group, size_t h, size_t end)
{
	size_t k = h + 1;

	while (k < end && group[k] != (int)h)
		k++;
	return k;
}

/* Whether site @i may join the group of @j, the latest site before it
 * on its base: the head's words but the site, and the group's step in
 * offset and site number (check_shared_group's loop). */
static bool may_join(const struct mem_site *s, const int *group, size_t j,
		     size_t i)
{
	size_t h = (size_t)group[j], k = second_member(group, h, i);

	if (s[h].op.kind != s[i].op.kind || s[h].op.size != s[i].op.size ||
	    s[h].line != s[i].line)
		return false;
	return k == i || (s[i].op.off - s[j].op.off == s[k].op.off - s[h].op.off &&
			  i - j == k - h);
}

void mc_plan_groups(const struct ptx_module *m, const struct mem_site *s,
		    size_t n, const bool *want, int *group)
{
	for (size_t i = 0; i < n; i++) {
		const struct ptx_func *f = m->items[s[i].item].func;

		group[i] = -1;
		if (!want[i] || f->stmts[s[i].stmt].pred >= 0)
			continue;
		/* the latest site before it on the same base, if it may join */
		for (size_t j = i; j-- > 0;) {
			if (group[j] < 0 || !tok_same(m, s[j].op.base, s[i].op.base))
				continue;
			if (straight(m, f, s[j].stmt, s[i].stmt, s[i].op.base) &&
			    may_join(s, group, j, i))
				group[i] = group[j];
			break;
		}
		if (group[i] < 0)
			group[i] = (int)i;
	}
}

/* Whether any statement of the loop holding statement @at (the run of
 * loop statements around it, nested loops and all) may write @base. */
static bool loop_writes(const struct ptx_module *m, const struct ptx_func *f,
			const struct mc_func *fn, uint32_t at, uint32_t base)
{
	uint32_t a = at, b = at;

	while (a > 0 && fn->in_loop[a - 1])
		a--;
	while (b + 1 < f->nstmts && fn->in_loop[b + 1])
		b++;
	return next_naming(m, fn, base, a) <= b;
}

int mc_site_hoist(struct mc_func *fn, const struct ptx_module *m,
		  const struct mem_site *s, size_t i, const int *hoist)
{
	const struct mem_op *op = &s[i].op;
	const struct ptx_func *f = m->items[s[i].item].func;
	size_t j = i;

	if (op->space != EGPU_SPACE_SHARED || !mc_site_checked(op, fn) ||
	    op->size_reg >= 0 || op->base_is == BASE_IMM ||
	    !fn->in_loop[s[i].stmt] || f->stmts[s[i].stmt].pred >= 0 ||
	    loop_writes(m, f, fn, s[i].stmt, op->base))
		return -1;
	/* the run of the latest site before it with a predicate */
	while (j > 0 && hoist[j - 1] < 0)
		j--;
	if (j > 0 && straight(m, f, s[j - 1].stmt, s[i].stmt, op->base))
		return hoist[j - 1];
	return fn->nhoisted < MC_HOISTED_MAX ? (int)fn->nhoisted++ : -1;
}

/* Whether a site of @k's predicate before it (its run: the sites of one
 * predicate are consecutive but for sites without one) has its base. */
static bool seen_base(const struct ptx_module *m, const struct mem_site *s,
		      const int *hoist, size_t k)
{
	for (size_t j = k; j-- > 0 && (hoist[j] < 0 || hoist[j] == hoist[k]);)
		if (hoist[j] == hoist[k] && tok_same(m, s[j].op.base, s[k].op.base))
			return true;
	return false;
}

/* After statement @st, the predicates @ids (a bit each) cleared, in the
 * order of their first site (ids grow with their sites). */
static int emit_reset_at(const struct ptx_module *m, const struct ptx_stmt *st,
			 uint32_t ids, const char *prefix, struct edits *e)
{
	for (; ids; ids &= ids - 1) {
		struct strbuf *sb = edit_at(e, tok_end(m, st->last - 1), 0);

		if (!sb)
			return err_set(EGPU_ENOMEM, "PTX: out of memory for edits");
		sb_printf(sb, "\n\tsetp.ne.u32 \t%%%s_mcv%d, 0, 0;", prefix,
			  __builtin_ctz(ids));
	}
	return 0;
}

/*
 * Only a statement that names a site's base outside an address (found in
 * fn->named) can clear a predicate: each such statement gets the ids of
 * the predicates whose sites' bases it names, each base of a predicate
 * looked up once, not every statement tested against every site.
 */
int mc_emit_resets(const struct ptx_module *m, const struct mc_func *fn,
		   const struct mem_site *s, size_t n, const int *hoist,
		   const char *prefix, struct edits *e)
{
	const struct ptx_func *f = n ? m->items[s[0].item].func : NULL;
	uint32_t *clears = f ? calloc(f->nstmts + 1, sizeof(*clears)) : NULL;
	int err = 0;

	if (f && !clears)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	for (size_t k = 0; k < n; k++) {
		uint32_t i = hoist[k] < 0 || seen_base(m, s, hoist, k) ?
			     UINT32_MAX : next_naming(m, fn, s[k].op.base, 0);

		for (; i < f->nstmts; i = next_naming(m, fn, s[k].op.base, i + 1))
			clears[i] |= 1u << hoist[k];
	}
	for (uint32_t i = 0; f && !err && i < f->nstmts; i++)
		if (clears[i])
			err = emit_reset_at(m, &f->stmts[i], clears[i], prefix, e);
	free(clears);
	return err;
}

/* The bytes from group head @h's address to the farthest end of its
 * members; *@last its last member. */
static int64_t group_far(const struct mem_site *all, const int *group,
			 size_t n, size_t h, size_t *last)
{
	int64_t far = 0;

	*last = h;
	for (size_t i = h; i < n; i++)
		if (group[i] == (int)h) {
			*last = i;
			if (all[i].op.off + all[i].op.size - all[h].op.off > far)
				far = all[i].op.off + all[i].op.size -
				      all[h].op.off;
		}
	return far;
}

/*
 * At a run's first site: its predicate set when every site of the run
 * (their bases not written in the loop: the same values here as at
 * them) passes its test, the one check_shared or check_shared_group
 * makes; then its sites test nothing until a base is written.
 */
static void run_test(struct strbuf *sb, const struct mc_site_code *c,
		     size_t i)
{
	const char *p = c->prefix;
	int h = c->hoist[i];
	char reg[40];
	size_t last;

	snprintf(reg, sizeof(reg), "%%%s_mct", p);
	sb_printf(sb, "\t@%%%s_mcv%d bra \t$%s_mcr_%u;\n\t{\n"
		  "\t.reg .b64 \t%%%s_mct;\n\t.reg .pred \t%%%s_mctq;\n"
		  "\tsetp.ne.u32 \t%%%s_mctq, 0, 0;\n", p, h, p, c->site, p, p,
		  p);
	for (size_t k = i; k < c->nall; k++) {
		if (c->hoist[k] != h)
			continue;
		mem_op_address(sb, c->m, &c->all[k].op, reg);
		sb_printf(sb, "\tcvta.to.shared.u64 \t%s, %s;\n"
			  "\tadd.s64 \t%s, %s, %lld;\n"
			  "\tsetp.gt.or.u64 \t%%%s_mctq, %s, %%%s_mcse, %%%s_mctq;\n",
			  reg, reg, reg, reg,
			  (long long)group_far(c->all, c->group, c->nall, k, &last),
			  p, reg, p, p);
	}
	sb_printf(sb, "\tnot.pred \t%%%s_mcv%d, %%%s_mctq;\n\t}\n$%s_mcr_%u:\n",
		  p, h, p, p, c->site);
}

void mc_emit_hoist_skip(struct strbuf *sb, const struct mc_site_code *c)
{
	size_t i = (size_t)(c->s - c->all), j = i;
	int h = c->hoist[i];

	while (j > 0 && c->hoist[j - 1] != h)
		j--;
	if (j == 0)
		run_test(sb, c, i);
	sb_printf(sb, "\t@%%%s_mcv%d bra \t$%s_mcv_%u;\n", c->prefix, h,
		  c->prefix, c->site);
}

void mc_emit_hoist_label(struct strbuf *sb, const char *prefix,
			 uint32_t site)
{
	sb_printf(sb, "$%s_mcv_%u:\n", prefix, site);
}

/*
 * The cell's tag read once, at the entry (%P_mctg), where no site keeps
 * a range: in a loop's body, where the caches are, a register live
 * throughout would cost more than the load on a miss. A change while
 * the kernel runs (a free in another stream) then reaches its hint tests
 * at the next launch, as cached loads of the states did before; the
 * search reads the tag itself.
 */
static bool tag_at_entry(const struct mc_func *fn)
{
	return fn->global && !fn->ncached;
}

/* %P_mc2 = the access's size. */
static void put_args(struct strbuf *sb, const struct mc_site_code *c)
{
	const struct mem_op *op = &c->s->op;
	const char *p = c->prefix;

	sb_printf(sb, "\t.reg .b64 \t%%%s_mc<6>, %%%s_mcr;\n"
		  "\t.reg .b32 \t%%%s_mcw<3>;\n\t.reg .pred \t%%%s_mcq;\n",
		  p, p, p, p);
	if (op->size_reg >= 0)
		sb_printf(sb, "\tcvt.u64.u32 \t%%%s_mc2, %.*s;\n", p,
			  (int)c->m->toks[op->size_reg].len,
			  tok_text(c->m, (uint32_t)op->size_reg));
	else
		sb_printf(sb, "\tmov.u64 \t%%%s_mc2, %u;\n", p, op->size);
}

/* With containment: %P_mcb |= %P_mcq. */
static void contain_or(struct strbuf *sb, const struct mc_site_code *c)
{
	if (c->contain)
		sb_printf(sb, "\tor.pred \t%%%s_mcb, %%%s_mcb, %%%s_mcq;\n",
			  c->prefix, c->prefix, c->prefix);
}

/* Where a copy's run-time ctx fields are (ctx_layout_mc's order):
 * registers, or NULL for the image's constant. */
struct mc_regs {
	const char *addr;  /* .b64 */
	const char *site;  /* .b32 */
	const char *bound; /* .b32 */
	const char *ret;   /* .b64, or NULL */
};

/*
 * A copy of the device runtime's @fn for site @k of the module (number
 * @number): its ctx folded into the site's words (struct mc_site_ctx)
 * and the registers @r; the copy's names end in @tag.
 */
static void copy_mc(struct strbuf *sb, const struct mc_site_code *c,
		    const struct inline_func *fn, const struct mem_site *k,
		    uint32_t number, uint32_t bound, char tag,
		    const struct mc_regs *r)
{
	const struct ptx_module *m = c->m;
	const struct mem_op *op = &k->op;
	uint8_t img[sizeof(struct mc_site_ctx)] = { 0 };
	char name[48];
	struct ctx_dyn dyn[4] = {
		{ .name = r->addr, .len = -1, .bits = 64 },
		{ .name = r->site, .len = -1, .bits = 32 },
		{ .bits = 32 },
		{ .name = r->bound, .len = -1, .bits = 32 },
	};
	struct inline_site at = { .name = name, .layout = &ctx_layout_mc,
				  .image = img, .dyn = dyn, .ret = r->ret };

	put_le(img + offsetof(struct mc_site_ctx, site), number, 4);
	put_le(img + offsetof(struct mc_site_ctx, kernel_id), k->kernel_id, 4);
	put_le(img + offsetof(struct mc_site_ctx, size), op->size, 4);
	put_le(img + offsetof(struct mc_site_ctx, kind), op->kind, 2);
	put_le(img + offsetof(struct mc_site_ctx, space), op->space, 2);
	put_le(img + offsetof(struct mc_site_ctx, line), k->line, 4);
	put_le(img + offsetof(struct mc_site_ctx, bound), bound, 4);
	if (op->size_reg >= 0) {
		dyn[2].name = tok_text(m, (uint32_t)op->size_reg);
		dyn[2].len = (int)m->toks[op->size_reg].len;
	}
	snprintf(name, sizeof(name), "%s_mck%u%c", c->prefix, c->site, tag);
	sb_printf(sb, "\t// copied %s\n", tag == 'f' ? MC_FIND_FUNC :
						       MC_WINDOW_FUNC);
	emit_inlined(sb, fn, &at);
}

/* The report of a shared or local access outside its window, under
 * %P_mcq: %P_mc3 its offset there, the window's bytes in @bound_reg or,
 * if NULL, @bound. */
static void report_window(struct strbuf *sb, const struct mc_site_code *c,
			  char tag, const char *bound_reg, uint32_t bound)
{
	const char *p = c->prefix;
	char addr[32];
	struct mc_regs r = { .addr = addr, .bound = bound_reg };

	snprintf(addr, sizeof(addr), "%%%s_mc3", p);
	sb_printf(sb, "\t@!%%%s_mcq bra \t$%s_mcs%c_%u;\n", p, p, tag, c->site);
	copy_mc(sb, c, c->mc_window, c->s, c->number, bound, tag, &r);
	sb_printf(sb, "$%s_mcs%c_%u:\n", p, tag, c->site);
}

/* Where the allocation passed goes: the site's cache registers, or
 * %P_mc3 and %P_mc4. */
static void range_regs(const struct mc_site_code *c, char *lo, char *hi,
		       size_t n)
{
	if (c->cache >= 0) {
		snprintf(lo, n, "%%%s_mcl%d", c->prefix, c->cache);
		snprintf(hi, n, "%%%s_mch%d", c->prefix, c->cache);
	} else {
		snprintf(lo, n, "%%%s_mc3", c->prefix);
		snprintf(hi, n, "%%%s_mc4", c->prefix);
	}
}

/* The search, copied: %P_mcq set when it found the access bad; a cache
 * takes the entry it found ({0, 0} without one: the next access
 * searches again; caching the access itself there, as calls did, cost
 * sgemm_tiled spills for what only helps before a table exists). */
static void copy_find(struct strbuf *sb, const struct mc_site_code *c)
{
	const char *p = c->prefix;
	char addr[32], ret[32], lo[40], hi[40];
	struct mc_regs r = { .addr = addr, .ret = ret };

	snprintf(addr, sizeof(addr), "%%%s_m0", p);
	snprintf(ret, sizeof(ret), "%%%s_mcr", p);
	copy_mc(sb, c, c->mc_find, c->s, c->number, 0, 'f', &r);
	if (c->cache >= 0) {
		range_regs(c, lo, hi, sizeof(lo));
		sb_printf(sb, "\tmov.b64 \t%s, 0;\n\tmov.b64 \t%s, 0;\n"
			  "\tsetp.gt.u64 \t%%%s_mcq, %s, %d;\n"
			  "\t@%%%s_mcq ld.global.u64 \t%s, [%s];\n"
			  "\t@%%%s_mcq ld.global.u64 \t%s, [%s+%zu];\n",
			  lo, hi, p, ret, MC_FOUND_OK, p, lo, ret, p, hi, ret,
			  offsetof(struct mc_entry, end));
	}
	sb_printf(sb, "\tsetp.eq.u64 \t%%%s_mcq, %s, %d;\n", p, ret,
		  MC_FOUND_BAD);
}

/* %P_mc@r ^= the tag word @tag << 32 (its high half only). */
static void untag(struct strbuf *sb, const char *p, int r, const char *tag)
{
	sb_printf(sb, "\tmov.b64 \t{%%%s_mcw0, %%%s_mcw1}, %%%s_mc%d;\n"
		  "\txor.b32 \t%%%s_mcw1, %%%s_mcw1, %s;\n"
		  "\tmov.b64 \t%%%s_mc%d, {%%%s_mcw0, %%%s_mcw1};\n",
		  p, p, p, r, p, p, tag, p, r, p, p);
}

/*
 * The site's hint (core/memcheck_layout.h, mc_hint_holds): the
 * allocation its last search found, which answers without a search when
 * its range, untagged with the table's current tag, holds the access;
 * else the search. One load: nothing waits on another.
 */
static void hint_or_find(struct strbuf *sb, const struct mc_site_code *c)
{
	const char *p = c->prefix;
	uint64_t hint = c->mc->hints +
			(uint64_t)(c->number % MC_HINTS) * sizeof(struct mc_hint);
	char lo[40], hi[40], tag[32];

	range_regs(c, lo, hi, sizeof(lo));
	/* (ptxas takes immediate addresses for .local only) */
	if (tag_at_entry(c->fn)) {
		snprintf(tag, sizeof(tag), "%%%s_mctg", p);
	} else {
		snprintf(tag, sizeof(tag), "%%%s_mcw2", p);
		sb_printf(sb, "\tmov.u64 \t%%%s_mc3, %llu;\n"
			  "\tld.global.u32 \t%s, [%%%s_mc3];\n", p,
			  (unsigned long long)(c->mc->cell +
					       offsetof(struct mc_cell, tag)),
			  tag, p);
	}
	sb_printf(sb, "\tmov.u64 \t%%%s_mc5, %llu;\n"
		  "\tld.global.v2.u64 \t{%%%s_mc3, %%%s_mc4}, [%%%s_mc5];\n",
		  p, (unsigned long long)hint, p, p, p);
	untag(sb, p, 3, tag);
	untag(sb, p, 4, tag);
	sb_printf(sb, "\tadd.u64 \t%%%s_mc5, %%%s_m0, %%%s_mc2;\n"
		  "\tsetp.lt.u64 \t%%%s_mcq, %%%s_m0, %%%s_mc3;\n"
		  "\tsetp.gt.or.u64 \t%%%s_mcq, %%%s_mc5, %%%s_mc4, %%%s_mcq;\n"
		  "\tsetp.ge.or.u64 \t%%%s_mcq, %%%s_m0, %llu, %%%s_mcq;\n"
		  "\t@%%%s_mcq bra \t$%s_mcf_%u;\n",
		  p, p, p, p, p, p, p, p, p, p, p, p,
		  (unsigned long long)1 << MC_HINT_ADDR_BITS, p, p, p, c->site);
	if (c->cache >= 0)
		sb_printf(sb, "\tmov.b64 \t%s, %%%s_mc3;\n\tmov.b64 \t%s, %%%s_mc4;\n",
			  lo, p, hi, p);
	sb_printf(sb, "\tbra \t$%s_mcd_%u;\n$%s_mcf_%u:\n", p, c->site, p,
		  c->site);
	copy_find(sb, c);
	sb_printf(sb, "$%s_mcd_%u:\n", p, c->site);
}

/* With a cache: nothing more while the access stays in the allocation
 * the site passed last. */
static void check_global(struct strbuf *sb, const struct mc_site_code *c)
{
	const char *p = c->prefix;
	int k = c->cache;

	if (k < 0) {
		hint_or_find(sb, c);
		contain_or(sb, c);
		return;
	}
	sb_printf(sb, "\tadd.u64 \t%%%s_mc5, %%%s_m0, %%%s_mc2;\n"
		  "\tsetp.lt.u64 \t%%%s_mcq, %%%s_m0, %%%s_mcl%d;\n"
		  "\tsetp.gt.or.u64 \t%%%s_mcq, %%%s_mc5, %%%s_mch%d, %%%s_mcq;\n"
		  "\t@!%%%s_mcq bra \t$%s_mcok_%u;\n",
		  p, p, p, p, p, p, k, p, p, p, k, p, p, p, c->site);
	hint_or_find(sb, c);
	sb_printf(sb, "$%s_mcok_%u:\n", p, c->site);
	contain_or(sb, c);
}

/* %P_mc3 = the window offset of shared address %P_mc3, %P_mcw1 the
 * window's bytes: the window ends at %P_mcse (mc_emit_entry) and is
 * %total_smem_size long. */
static void shared_offset(struct strbuf *sb, const char *p)
{
	sb_printf(sb, "\tmov.u32 \t%%%s_mcw1, %%total_smem_size;\n"
		  "\tcvt.u64.u32 \t%%%s_mc5, %%%s_mcw1;\n"
		  "\tsub.u64 \t%%%s_mc4, %%%s_mcse, %%%s_mc5;\n"
		  "\tsub.u64 \t%%%s_mc3, %%%s_mc3, %%%s_mc4;\n",
		  p, p, p, p, p, p, p, p, p);
}

static void check_shared(struct strbuf *sb, const struct mc_site_code *c)
{
	const char *p = c->prefix;
	char bound[32];

	sb_printf(sb, "\tcvta.to.shared.u64 \t%%%s_mc3, %%%s_m0;\n"
		  "\tadd.u64 \t%%%s_mc5, %%%s_mc3, %%%s_mc2;\n"
		  "\tsetp.gt.u64 \t%%%s_mcq, %%%s_mc5, %%%s_mcse;\n",
		  p, p, p, p, p, p, p, p);
	contain_or(sb, c);
	sb_printf(sb, "\t@!%%%s_mcq bra \t$%s_mcs_%u;\n", p, p, c->site);
	shared_offset(sb, p);
	snprintf(bound, sizeof(bound), "%%%s_mcw1", p);
	report_window(sb, c, 's', bound, 0);
	sb_printf(sb, "$%s_mcs_%u:\n", p, c->site);
}

/*
 * A group's head: one test of the farthest end of its members. Past the
 * end, a loop over the members (offsets and site numbers in steps:
 * mc_plan_groups) sends each one past the end as itself, its other words
 * the head's, from one copy: a loop with no more in it than the copy
 * keeps ptxas within the kernel's registers.
 */
static void check_shared_group(struct strbuf *sb,
			       const struct mc_site_code *c)
{
	const char *p = c->prefix;
	size_t head = (size_t)(c->s - c->all), last;
	size_t k = second_member(c->group, head, c->nall);
	int64_t step = k < c->nall ? c->all[k].op.off - c->s->op.off : 0;
	uint32_t n = c->site, nstep = k < c->nall ? (uint32_t)(k - head) : 1;
	int64_t far = group_far(c->all, c->group, c->nall, head, &last);
	char addr[32], site[32], bound[32];
	struct mc_regs r = { .addr = addr, .site = site, .bound = bound };

	sb_printf(sb, "\tcvta.to.shared.u64 \t%%%s_mc3, %%%s_m0;\n"
		  "\tadd.s64 \t%%%s_mc5, %%%s_mc3, %lld;\n"
		  "\tsetp.gt.u64 \t%%%s_mcq, %%%s_mc5, %%%s_mcse;\n"
		  "\t@!%%%s_mcq bra \t$%s_mcs_%u;\n",
		  p, p, p, p, (long long)far, p, p, p, p, p, n);
	/* %P_mc4, %P_mcw0: the member's offset in the window, its site */
	shared_offset(sb, p);
	sb_printf(sb, "\tmov.b64 \t%%%s_mc4, %%%s_mc3;\n\tmov.u32 \t%%%s_mcw0, %u;\n"
		  "$%s_mcn_%u:\n"
		  "\tcvt.u64.u32 \t%%%s_mc5, %%%s_mcw1;\n"
		  "\tsub.u64 \t%%%s_mc5, %%%s_mc5, %%%s_mc4;\n"
		  "\tsetp.lt.s64 \t%%%s_mcq, %%%s_mc5, %u;\n"
		  "\t@!%%%s_mcq bra \t$%s_mcm_%u;\n",
		  p, p, p, c->number, p, n, p, p, p, p, p, p, p,
		  c->s->op.size, p, p, n);
	snprintf(addr, sizeof(addr), "%%%s_mc4", p);
	snprintf(site, sizeof(site), "%%%s_mcw0", p);
	snprintf(bound, sizeof(bound), "%%%s_mcw1", p);
	copy_mc(sb, c, c->mc_window, c->s, c->number, 0, 'g', &r);
	sb_printf(sb, "$%s_mcm_%u:\n"
		  "\tadd.s64 \t%%%s_mc4, %%%s_mc4, %lld;\n"
		  "\tadd.u32 \t%%%s_mcw0, %%%s_mcw0, %u;\n"
		  "\tsetp.le.u32 \t%%%s_mcq, %%%s_mcw0, %u;\n"
		  "\t@%%%s_mcq bra \t$%s_mcn_%u;\n$%s_mcs_%u:\n",
		  p, n, p, p, (long long)step, p, p, nstep, p, p,
		  c->number + (uint32_t)(last - head), p, p, n, p, n);
}

/* The offset in the depot, unsigned: below its start wraps past it. */
static void check_local(struct strbuf *sb, const struct mc_site_code *c)
{
	const struct ptx_module *m = c->m;
	const char *p = c->prefix;
	uint32_t size = c->s->op.size, depot = c->fn->depot_size;

	sb_printf(sb, "\tcvta.to.local.u64 \t%%%s_mc3, %%%s_m0;\n"
		  "\tmov.u64 \t%%%s_mc4, %.*s;\n"
		  "\tsub.u64 \t%%%s_mc3, %%%s_mc3, %%%s_mc4;\n",
		  p, p, p, (int)m->toks[c->fn->depot].len,
		  tok_text(m, c->fn->depot), p, p, p);
	if (size <= depot)
		sb_printf(sb, "\tsetp.gt.u64 \t%%%s_mcq, %%%s_mc3, %u;\n", p, p,
			  depot - size);
	else
		sb_printf(sb, "\tsetp.ge.u64 \t%%%s_mcq, %%%s_mc3, 0;\n", p, p);
	report_window(sb, c, 'l', NULL, depot);
	contain_or(sb, c);
}

/* Local accesses are checked where the frame is known and the size is. */
static bool local_checked(const struct mc_site_code *c)
{
	return c->fn->frame_ok && c->s->op.size_reg < 0;
}

/* A generic address: the window isspacep finds it in decides. */
static void check_generic(struct strbuf *sb, const struct mc_site_code *c)
{
	const char *p = c->prefix;
	uint32_t n = c->site;

	sb_printf(sb, "\tisspacep.global \t%%%s_mcq, %%%s_m0;\n"
		  "\t@!%%%s_mcq bra \t$%s_mcg_%u;\n", p, p, p, p, n);
	check_global(sb, c);
	sb_printf(sb, "\tbra \t$%s_mce_%u;\n$%s_mcg_%u:\n"
		  "\tisspacep.shared \t%%%s_mcq, %%%s_m0;\n"
		  "\t@!%%%s_mcq bra \t$%s_mch_%u;\n", p, n, p, n, p, p, p, p, n);
	check_shared(sb, c);
	sb_printf(sb, "\tbra \t$%s_mce_%u;\n$%s_mch_%u:\n", p, n, p, n);
	if (local_checked(c)) {
		sb_printf(sb, "\tisspacep.local \t%%%s_mcq, %%%s_m0;\n"
			  "\t@!%%%s_mcq bra \t$%s_mce_%u;\n", p, p, p, p, n);
		check_local(sb, c);
	}
	sb_printf(sb, "$%s_mce_%u:\n", p, n);
}

bool mc_site_checked(const struct mem_op *op, const struct mc_func *fn)
{
	switch (op->space) {
	case EGPU_SPACE_GLOBAL:
	case EGPU_SPACE_GENERIC:
		return true;
	case EGPU_SPACE_SHARED: /* another block's (::cluster): not ours */
		return !op->cluster;
	case EGPU_SPACE_LOCAL:
		return fn->frame_ok && op->size_reg < 0;
	default:
		return false;
	}
}

int mc_site_plan(struct mc_func *fn, const struct mem_site *s)
{
	uint8_t space = s->op.space;

	if (!mc_site_checked(&s->op, fn))
		return -1;
	fn->shared |= space == EGPU_SPACE_SHARED || space == EGPU_SPACE_GENERIC;
	fn->global |= space == EGPU_SPACE_GLOBAL || space == EGPU_SPACE_GENERIC;
	if ((space != EGPU_SPACE_GLOBAL && space != EGPU_SPACE_GENERIC) ||
	    !fn->in_loop[s->stmt] || fn->ncached >= MC_CACHED_MAX)
		return -1;
	return (int)fn->ncached++;
}

bool mc_func_has_entry(const struct mc_func *fn)
{
	return fn->ncached || fn->shared || tag_at_entry(fn);
}

void mc_emit_entry(struct strbuf *sb, const char *prefix,
		   const struct mc_func *fn)
{
	const char *p = prefix;

	if (!mc_func_has_entry(fn))
		return;
	sb_adds(sb, "// begin egpu memcheck\n");
	if (fn->ncached)
		sb_printf(sb, "\t.reg .b64 \t%%%s_mcl<%u>, %%%s_mch<%u>;\n", p,
			  fn->ncached, p, fn->ncached);
	for (uint32_t i = 0; i < fn->ncached; i++)
		sb_printf(sb, "\tmov.b64 \t%%%s_mcl%u, 0;\n\tmov.b64 \t%%%s_mch%u, 0;\n",
			  p, i, p, i);
	if (fn->nhoisted)
		sb_printf(sb, "\t.reg .pred \t%%%s_mcv<%u>;\n", p, fn->nhoisted);
	for (uint32_t i = 0; i < fn->nhoisted; i++)
		sb_printf(sb, "\tsetp.ne.u32 \t%%%s_mcv%u, 0, 0;\n", p, i);
	if (fn->shared)
		sb_printf(sb, "\t.reg .b64 \t%%%s_mcse;\n\t{\n"
			  "\t.reg .b32 \t%%%s_mcsw;\n\t.reg .b64 \t%%%s_mcsx;\n"
			  "\tmov.u64 \t%%%s_mcse, egpu_dev_mc_smem;\n"
			  "\tmov.u32 \t%%%s_mcsw, %%dynamic_smem_size;\n"
			  "\tcvt.u64.u32 \t%%%s_mcsx, %%%s_mcsw;\n"
			  "\tadd.u64 \t%%%s_mcse, %%%s_mcse, %%%s_mcsx;\n\t}\n",
			  p, p, p, p, p, p, p, p, p, p);
	if (tag_at_entry(fn))
		sb_printf(sb, "\t.reg .b32 \t%%%s_mctg;\n\t{\n"
			  "\t.reg .b64 \t%%%s_mcta;\n\tmov.u64 \t%%%s_mcta, %llu;\n"
			  "\tld.global.u32 \t%%%s_mctg, [%%%s_mcta];\n\t}\n",
			  p, p, p,
			  (unsigned long long)(fn->cell +
					       offsetof(struct mc_cell, tag)),
			  p, p);
	sb_adds(sb, "\t// end egpu memcheck\n\t");
}

/* Whether the site heads a group with members besides itself. */
static bool grouped(const struct mc_site_code *c)
{
	size_t i = (size_t)(c->s - c->all);

	return c->group && c->group[i] == (int)i &&
	       second_member(c->group, i, c->nall) < c->nall;
}

void mc_emit_check(struct strbuf *sb, const struct mc_site_code *c)
{
	if (!mc_site_checked(&c->s->op, c->fn))
		return;
	if (c->group && c->group[c->s - c->all] >= 0 &&
	    c->group[c->s - c->all] != c->s - c->all)
		return; /* checked at its group's head */
	sb_adds(sb, "\t// egpu memcheck\n");
	put_args(sb, c);
	switch (c->s->op.space) {
	case EGPU_SPACE_GLOBAL:
		check_global(sb, c);
		break;
	case EGPU_SPACE_SHARED:
		if (grouped(c))
			check_shared_group(sb, c);
		else
			check_shared(sb, c);
		break;
	case EGPU_SPACE_LOCAL:
		check_local(sb, c);
		break;
	default:
		check_generic(sb, c);
	}
}

void mc_emit_open(struct strbuf *sb, const char *prefix)
{
	sb_printf(sb, "\t{\n\t.reg .pred \t%%%s_mcb;\n\tsetp.ne.u32 \t%%%s_mcb, 0, 0;\n",
		  prefix, prefix);
}

void mc_emit_skip(struct strbuf *sb, const char *prefix, uint32_t site)
{
	sb_printf(sb, "\t@%%%s_mcb bra \t$%s_mcx_%u;\n", prefix, prefix, site);
}

/* Destinations of a load or atomic: the registers before its address. */
static void zero_dests(struct strbuf *sb, const struct ptx_module *m,
		       const struct ptx_func *f, const struct ptx_stmt *st,
		       const char *prefix)
{
	for (uint32_t t = st->op + 1; t < st->last && !tok_is(m, t, "["); t++) {
		int bits;

		if (m->toks[t].kind != TOK_IDENT || tok_text(m, t)[0] != '%')
			continue;
		bits = reg_bits(m, f, t);
		if (bits == 16 || bits == 32 || bits == 64)
			sb_printf(sb, "\t@%%%s_mcb mov.b%d \t%.*s, 0;\n", prefix,
				  bits, (int)m->toks[t].len, tok_text(m, t));
	}
}

void mc_emit_after(struct strbuf *sb, const struct ptx_module *m,
		   const struct mem_site *s, const char *prefix,
		   uint32_t site)
{
	const struct ptx_func *f = m->items[s->item].func;

	sb_printf(sb, "\n$%s_mcx_%u:\n", prefix, site);
	if (s->op.kind == EGPU_MEM_LOAD || s->op.kind == EGPU_MEM_ATOMIC)
		zero_dests(sb, m, f, &f->stmts[s->stmt], prefix);
	sb_adds(sb, "\t}");
}
