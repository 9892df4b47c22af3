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
 */
#include <stdlib.h>
#include <string.h>

#include "egpu/ctx.h"
#include "ptx/memplan.h"

struct mem_plan {
	const struct ptx_module *m;
	struct mem_req *reqs;
	size_t nreq;
	size_t nkernels;
	uint8_t *reach;       /* [kernel][item]: the kernel runs the item */
	uint32_t *item_kernel;/* kernel id of an item's sites */
	uint8_t *item_reqs;   /* [item][req]: request probes the item */
	struct mem_site *sites;
	size_t nsites, cap;
	uint32_t *calls;      /* request indices, per site a range */
	size_t ncalls;
	size_t skipped;
};

static bool is_func(const struct ptx_module *m, uint32_t i)
{
	return m->items[i].kind == IT_FUNC && m->items[i].func->defined;
}

/* The defined function named by token @t of the module, or -1. */
static int64_t func_named(const struct ptx_module *m, uint32_t t)
{
	const char *s = tok_text(m, t);

	if (m->toks[t].kind != TOK_IDENT || *s == '%' || *s == '$')
		return -1;
	for (uint32_t i = 0; i < m->nitems; i++)
		if (is_func(m, i) && !m->items[i].func->entry &&
		    tok_same(m, t, m->items[i].name))
			return i;
	return -1;
}

/* Mark in @seen every function item that item @from reaches. */
static int reach_from(const struct ptx_module *m, uint32_t from, uint8_t *seen)
{
	uint32_t *stack = malloc((m->nitems + 1) * sizeof(*stack)), n = 0;

	if (!stack)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	seen[from] = 1;
	stack[n++] = from;
	while (n) {
		const struct ptx_func *f = m->items[stack[--n]].func;

		for (uint32_t i = 0; i < f->nstmts; i++) {
			const struct ptx_stmt *st = &f->stmts[i];

			for (uint32_t t = st->first; st->kind == ST_INSN &&
						     t < st->last; t++) {
				int64_t g = t == st->op ? -1 : func_named(m, t);

				if (g >= 0 && !seen[g]) {
					seen[g] = 1;
					stack[n++] = (uint32_t)g;
				}
			}
		}
	}
	free(stack);
	return 0;
}

static int plan_reach(struct mem_plan *p, const uint32_t *kernel_items)
{
	const struct ptx_module *m = p->m;
	size_t ni = m->nitems;
	int err = 0;

	p->reach = calloc(p->nkernels * ni + 1, 1);
	p->item_kernel = calloc(ni + 1, sizeof(*p->item_kernel));
	p->item_reqs = calloc(ni * p->nreq + 1, 1);
	if (!p->reach || !p->item_kernel || !p->item_reqs)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	for (size_t k = 0; k < p->nkernels && !err; k++)
		err = reach_from(m, kernel_items[k], &p->reach[k * ni]);
	for (size_t i = 0; i < ni && !err; i++) {
		uint32_t n = 0;

		for (size_t k = 0; k < p->nkernels; k++) {
			if (!p->reach[k * ni + i])
				continue;
			p->item_kernel[i] = n++ ? EGPU_MEM_KERNEL_SHARED :
						  (uint32_t)k;
			for (size_t r = 0; r < p->nreq; r++)
				p->item_reqs[i * p->nreq + r] |=
					p->reqs[r].kernels[k];
		}
	}
	return err;
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
				.calls = p->nsites * p->nreq };
	for (size_t r = 0; r < p->nreq; r++) {
		const struct mem_req *q = &p->reqs[r];

		if (!p->item_reqs[item * p->nreq + r] || !selects(q->r, op))
			continue;
		p->calls[s->calls + n++] = (uint32_t)r;
		s->need_ctx |= q->need_ctx;
		s->need_text |= q->need_ctx || q->reads_text;
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

int mem_plan_make(const struct ptx_module *m, const uint32_t *kernel_items,
		  size_t nkernels, struct mem_req *reqs, size_t nreq,
		  struct mem_plan **out)
{
	struct mem_plan *p = calloc(1, sizeof(*p));
	int err;

	*out = p;
	if (!p)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	*p = (struct mem_plan){ .m = m, .reqs = reqs, .nreq = nreq,
				.nkernels = nkernels };
	if (m->address_size != 64)
		return err_set(EGPU_ENOTSUP,
			       "memory probes need .address_size 64; the module has %u",
			       m->address_size);
	err = plan_reach(p, kernel_items);
	for (uint32_t i = 0; i < m->nitems && !err; i++)
		if (is_func(m, i) && item_probed(p, i))
			err = plan_item(p, i);
	return err;
}

void mem_plan_free(struct mem_plan *p)
{
	if (!p)
		return;
	free(p->reach);
	free(p->item_kernel);
	free(p->item_reqs);
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

size_t mem_plan_skipped(const struct mem_plan *p)
{
	return p ? p->skipped : 0;
}

uint32_t mem_plan_points(const struct mem_plan *p, size_t kernel)
{
	uint32_t n = 0;

	for (size_t i = 0; p && i < p->nsites; i++)
		n += p->reach[kernel * p->m->nitems + p->sites[i].item];
	return n;
}
