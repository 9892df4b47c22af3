/* SPDX-License-Identifier: MIT */
/*
 * Where memory probes go: every memory instruction (memop.c) of the
 * kernels that EGPU_ATTACH_MEM requests match and of every .func those
 * kernels reach through calls (or take the address of), with the probes
 * of each request whose kernels reach the function and whose masks
 * select the instruction. Sites are numbered in text order over the
 * module; a site in a .func that several kernels reach (probed or not:
 * its probes run whenever the .func runs) has kernel id
 * EGPU_MEM_KERNEL_SHARED.
 *
 * A request's copies are bounded per module (mem_req.limit): functions
 * get copies in order of their number of its sites, fewest first, while
 * the total fits; the others call the probe at every site. Small kernels
 * keep their copies, the biggest call.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "egpu/ctx.h"
#include "core/mem_ctx.h"
#include "ptx/memplan.h"

/* A defined .func by name, for lookups by binary search. */
struct func_name {
	const char *s;
	uint32_t len;
	uint32_t item;
};

struct mem_plan {
	const struct ptx_module *m;
	struct mem_req *reqs;
	size_t nreq;
	const uint32_t *kernel_items; /* by kernel index, in mem_plan_make() */
	const uint32_t *kernel_ids;   /* likewise */
	size_t nkernels;
	uint32_t site_base;   /* number of the first site */
	struct func_name *funcs;      /* sorted by name */
	size_t nfuncs;
	uint8_t *seen;        /* per item, during one walk (all zero else) */
	uint32_t *visit;      /* items one walk reached */
	uint32_t *item_kernel; /* kernel id of an item's sites */
	uint32_t *item_nkernels; /* kernels that reach the item */
	uint8_t *item_reqs;   /* [item][req]: request probes the item */
	uint32_t *item_sites; /* sites in the item */
	uint32_t *points;     /* by kernel index: sites it runs */
	struct mem_site *sites;
	size_t nsites, cap;
	uint32_t *calls;      /* request indices, nreq slots per site */
	size_t skipped;
	uint8_t *item_called; /* [item][req]: calls instead of copies */
	size_t called;
};

static bool is_func(const struct ptx_module *m, uint32_t i)
{
	return m->items[i].kind == IT_FUNC && m->items[i].func->defined;
}

static int by_name(const void *a, const void *b)
{
	const struct func_name *x = a, *y = b;
	int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The defined .funcs of the module, sorted by name. */
static int func_index(struct mem_plan *p)
{
	const struct ptx_module *m = p->m;

	p->funcs = calloc(m->nitems + 1, sizeof(*p->funcs));
	if (!p->funcs)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	for (uint32_t i = 0; i < m->nitems; i++)
		if (is_func(m, i) && !m->items[i].func->entry)
			p->funcs[p->nfuncs++] = (struct func_name){
				tok_text(m, m->items[i].name),
				m->toks[m->items[i].name].len, i };
	qsort(p->funcs, p->nfuncs, sizeof(*p->funcs), by_name);
	return 0;
}

/* The defined .func named by token @t, or -1. */
static int64_t func_named(const struct mem_plan *p, uint32_t t)
{
	const struct ptx_module *m = p->m;
	struct func_name key = { tok_text(m, t), m->toks[t].len, 0 };
	const struct func_name *f;

	if (m->toks[t].kind != TOK_IDENT || *key.s == '%' || *key.s == '$')
		return -1;
	f = bsearch(&key, p->funcs, p->nfuncs, sizeof(*p->funcs), by_name);
	return f ? (int64_t)f->item : -1;
}

/* Every .func item @from calls or takes the address of, into @out. */
static void callees(const struct mem_plan *p, uint32_t from, uint32_t *out,
		    uint32_t *n)
{
	const struct ptx_func *f = p->m->items[from].func;

	for (uint32_t i = 0; i < f->nstmts; i++) {
		const struct ptx_stmt *st = &f->stmts[i];

		for (uint32_t t = st->first; st->kind == ST_INSN && t < st->last;
		     t++) {
			int64_t g = t == st->op ? -1 : func_named(p, t);

			if (g >= 0 && !p->seen[g]) {
				p->seen[g] = 1;
				out[(*n)++] = (uint32_t)g;
			}
		}
	}
}

/* The items kernel @k runs, into p->visit; clear p->seen after use. */
static uint32_t walk(struct mem_plan *p, size_t k)
{
	uint32_t n = 0;

	p->visit[n++] = p->kernel_items[k];
	p->seen[p->kernel_items[k]] = 1;
	for (uint32_t i = 0; i < n; i++)
		callees(p, p->visit[i], p->visit, &n);
	return n;
}

static void unwalk(struct mem_plan *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		p->seen[p->visit[i]] = 0;
}

static int plan_reach(struct mem_plan *p)
{
	size_t ni = p->m->nitems;

	p->seen = calloc(ni + 1, 1);
	p->visit = calloc(ni + 1, sizeof(*p->visit));
	p->item_kernel = calloc(ni + 1, sizeof(*p->item_kernel));
	p->item_nkernels = calloc(ni + 1, sizeof(*p->item_nkernels));
	p->item_reqs = calloc(ni * p->nreq + 1, 1);
	p->item_sites = calloc(ni + 1, sizeof(*p->item_sites));
	p->item_called = calloc(ni * p->nreq + 1, 1);
	p->points = calloc(p->nkernels + 1, sizeof(*p->points));
	if (!p->seen || !p->visit || !p->item_kernel || !p->item_nkernels ||
	    !p->item_reqs || !p->item_sites || !p->item_called || !p->points)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	for (size_t k = 0; k < p->nkernels; k++) {
		uint32_t n = walk(p, k);

		for (uint32_t v = 0; v < n; v++) {
			uint32_t i = p->visit[v];

			p->item_kernel[i] = p->item_nkernels[i]++ ?
						    EGPU_MEM_KERNEL_SHARED :
						    p->kernel_ids[k];
			for (size_t r = 0; r < p->nreq; r++)
				p->item_reqs[i * p->nreq + r] |=
					p->reqs[r].kernels[k];
		}
		unwalk(p, n);
	}
	return 0;
}

/* Sites each kernel runs: its own and those of the .funcs it reaches. */
static void count_points(struct mem_plan *p)
{
	for (size_t i = 0; i < p->nsites; i++)
		p->item_sites[p->sites[i].item]++;
	for (size_t k = 0; k < p->nkernels; k++) {
		uint32_t n = walk(p, k);

		for (uint32_t v = 0; v < n; v++)
			p->points[k] += p->item_sites[p->visit[v]];
		unwalk(p, n);
	}
}

static bool selects(const struct ptx_attach *r, const struct mem_op *op)
{
	return (!r->mem_spaces || (r->mem_spaces >> op->space & 1)) &&
	       (!r->mem_kinds || (r->mem_kinds >> op->kind & 1));
}

static int grow(struct mem_plan *p)
{
	size_t cap = p->cap ? p->cap * 2 : 64;
	struct mem_site *v;
	uint32_t *c;

	if (p->nsites < p->cap)
		return 0;
	v = realloc(p->sites, cap * sizeof(*v));
	if (v)
		p->sites = v;
	c = v ? realloc(p->calls, cap * p->nreq * sizeof(*c)) : NULL;
	if (!c)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	p->calls = c;
	p->cap = cap;
	return 0;
}

/* .loc FILE LINE COL: the line and file number. */
static void read_loc(const struct ptx_module *m, const struct ptx_stmt *st,
		     uint32_t *file, uint32_t *line)
{
	uint32_t t = st->op;

	if (m->toks[t + 1].kind == TOK_INT && m->toks[t + 2].kind == TOK_INT) {
		*file = (uint32_t)strtoul(tok_text(m, t + 1), NULL, 0);
		*line = (uint32_t)strtoul(tok_text(m, t + 2), NULL, 0);
	}
}

static int add_site(struct mem_plan *p, uint32_t item, uint32_t i,
		    const struct mem_op *op, uint32_t file, uint32_t line)
{
	struct mem_site *s;
	size_t n = 0;
	int err = grow(p);

	if (err)
		return err;
	s = &p->sites[p->nsites];
	*s = (struct mem_site){ .item = item, .stmt = i, .op = *op,
				.kernel_id = p->item_kernel[item],
				.file = file, .line = line,
				.calls = p->nsites * p->nreq,
				.value_in_reg = mem_value_in_reg(p->m,
					p->m->items[item].func, op) };
	for (size_t r = 0; r < p->nreq; r++) {
		const struct mem_req *q = &p->reqs[r];

		if (!p->item_reqs[item * p->nreq + r] || !selects(q->r, op))
			continue;
		p->calls[s->calls + n++] = (uint32_t)r;
		s->need_ctx |= q->need_ctx;
		s->need_text |= q->need_ctx || q->reads_text;
		/* read_value's lowering copies the bytes from value_at only
		 * where they are not in a register. */
		s->need_value |= op->value &&
				 (q->need_ctx || q->reads_value ||
				  (q->reads_value_at && !s->value_in_reg));
		s->need_bits |= s->value_in_reg &&
				(q->need_ctx || q->reads_value_bits);
	}
	s->ncalls = n;
	p->nsites += n > 0;
	return 0;
}

static int plan_item(struct mem_plan *p, uint32_t item)
{
	const struct ptx_module *m = p->m;
	const struct ptx_func *f = m->items[item].func;
	uint32_t file = 0, line = 0;
	int err = 0;

	for (uint32_t i = 0; i + 1 < f->nstmts && !err; i++) {
		const struct ptx_stmt *st = &f->stmts[i];
		struct mem_op op;
		const char *why;

		if (st->kind == ST_DIR && tok_is(m, st->op, ".loc"))
			read_loc(m, st, &file, &line);
		switch (mem_op_read(m, f, st, &op, &why)) {
		case MEM_PROBE:
			err = add_site(p, item, i, &op, file, line);
			break;
		case MEM_SKIP:
			p->skipped++;
			break;
		default:
			break;
		}
	}
	return err;
}

static bool item_probed(const struct mem_plan *p, uint32_t item)
{
	for (size_t r = 0; r < p->nreq; r++)
		if (p->item_reqs[item * p->nreq + r])
			return true;
	return false;
}

/* A function and its number of sites of one request. */
struct item_count {
	uint32_t item;
	uint32_t sites;
};

static int by_sites(const void *a, const void *b)
{
	const struct item_count *x = a, *y = b;

	if (x->sites != y->sites)
		return (x->sites > y->sites) - (x->sites < y->sites);
	return (x->item > y->item) - (x->item < y->item);
}

/* Request @r's sites per function, into @v (one slot per item). */
static size_t count_req_sites(const struct mem_plan *p, size_t r,
			      struct item_count *v)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nsites; i++) {
		const struct mem_site *s = &p->sites[i];

		for (size_t k = 0; k < s->ncalls; k++) {
			if (p->calls[s->calls + k] != r)
				continue;
			if (!n || v[n - 1].item != s->item)
				v[n++] = (struct item_count){ s->item, 0 };
			v[n - 1].sites++;
		}
	}
	return n;
}

/* Mark the functions where request @r's copies would pass its limit. */
static void limit_req(struct mem_plan *p, size_t r, struct item_count *v)
{
	const struct mem_req *q = &p->reqs[r];
	size_t n = count_req_sites(p, r, v), used = 0, i;

	qsort(v, n, sizeof(*v), by_sites);
	for (i = 0; i < n; i++) {
		size_t cost = (size_t)v[i].sites * q->copy_bytes;

		if (cost > q->limit - used)
			break;
		used += cost;
	}
	for (; i < n; i++)
		p->item_called[v[i].item * p->nreq + r] = 1;
}

/* Sites that call a probe past its limit build the ctx it reads. */
static int limit_copies(struct mem_plan *p)
{
	struct item_count *v = calloc(p->m->nitems + 1, sizeof(*v));

	if (!v)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	for (size_t r = 0; r < p->nreq; r++)
		if (p->reqs[r].call.body)
			limit_req(p, r, v);
	free(v);
	for (size_t i = 0; i < p->nsites; i++) {
		struct mem_site *s = &p->sites[i];

		for (size_t k = 0; k < s->ncalls; k++) {
			const struct mem_req *q = mem_plan_call(p, s, k);

			if (mem_plan_probe(p, s, k) != &q->called)
				continue;
			p->called++;
			s->need_ctx |= q->called_ctx;
			s->need_text |= q->called_ctx &&
					(!q->call.fold || q->reads_text);
			s->need_value |= s->op.value && q->called_ctx;
			s->need_bits |= s->value_in_reg && q->called_ctx;
		}
	}
	return 0;
}

int mem_plan_make(const struct ptx_module *m, const uint32_t *kernel_items,
		  const uint32_t *kernel_ids, size_t nkernels,
		  struct mem_req *reqs, size_t nreq, struct mem_plan **out)
{
	struct mem_plan *p = calloc(1, sizeof(*p));
	int err;

	*out = p;
	if (!p)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	*p = (struct mem_plan){ .m = m, .reqs = reqs, .nreq = nreq,
				.kernel_items = kernel_items,
				.kernel_ids = kernel_ids,
				.nkernels = nkernels };
	if (m->address_size != 64)
		return err_set(EGPU_ENOTSUP,
			       "memory probes need .address_size 64; the module has %u",
			       m->address_size);
	/* Only stores whose probes read their value get a copy of it. */
	for (size_t r = 0; r < nreq; r++) {
		const struct inline_func *body = reqs[r].call.body;
		bool fold = reqs[r].call.fold;

		reqs[r].reads_value = fold && inline_reads_ctx(body,
			offsetof(struct egpu_mem_ctx, value), 8);
		reqs[r].reads_value_at = fold && inline_reads_ctx(body,
			offsetof(struct mem_site_ctx, value_at), 8);
		reqs[r].reads_value_bits = fold && inline_reads_ctx(body,
			offsetof(struct mem_site_ctx, value_bits), 8);
	}
	err = func_index(p);
	if (!err)
		err = plan_reach(p);
	for (uint32_t i = 0; i < m->nitems && !err; i++)
		if (is_func(m, i) && item_probed(p, i))
			err = plan_item(p, i);
	if (!err)
		err = limit_copies(p);
	if (!err)
		count_points(p);
	p->kernel_items = p->kernel_ids = NULL; /* the caller's, for this call only */
	return err;
}

void mem_plan_free(struct mem_plan *p)
{
	if (!p)
		return;
	free(p->funcs);
	free(p->seen);
	free(p->visit);
	free(p->item_kernel);
	free(p->item_nkernels);
	free(p->item_reqs);
	free(p->item_sites);
	free(p->item_called);
	free(p->points);
	free(p->sites);
	free(p->calls);
	free(p);
}

size_t mem_plan_sites(const struct mem_plan *p, const struct mem_site **sites)
{
	*sites = p ? p->sites : NULL;
	return p ? p->nsites : 0;
}

const struct mem_req *mem_plan_call(const struct mem_plan *p,
				    const struct mem_site *s, size_t i)
{
	return &p->reqs[p->calls[s->calls + i]];
}

const struct probe_call *mem_plan_probe(const struct mem_plan *p,
					const struct mem_site *s, size_t i)
{
	uint32_t r = p->calls[s->calls + i];

	if (p->item_called[s->item * p->nreq + r])
		return &p->reqs[r].called;
	return &p->reqs[r].call;
}

size_t mem_plan_called(const struct mem_plan *p)
{
	return p ? p->called : 0;
}

size_t mem_plan_skipped(const struct mem_plan *p)
{
	return p ? p->skipped : 0;
}

uint32_t mem_plan_points(const struct mem_plan *p, size_t kernel)
{
	return p ? p->points[kernel] : 0;
}

void mem_plan_set_site_base(struct mem_plan *p, uint32_t base)
{
	p->site_base = base;
}

uint32_t mem_plan_site_base(const struct mem_plan *p)
{
	return p ? p->site_base : 0;
}
