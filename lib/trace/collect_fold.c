/* SPDX-License-Identifier: MIT */
/*
 * The totals of a streamed trace (collect_stream.c): each part, once
 * written, is folded into one call per (API, stack) and one operation per
 * (kind, name, device, stream, call), with its runs counted and its time
 * and bytes summed (trace_op.count). The folded stacks, flame graph,
 * summary and pprof profile need nothing more, so a trace of any length
 * keeps only as many records as it has distinct paths.
 */
#include <stdlib.h>

#include "collect_fold.h"

#define FOLD_MIX 0x9e3779b97f4a7c15ull

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + FOLD_MIX + (h << 6) + (h >> 2);
	return h;
}

static uint64_t api_hash(const struct trace_api *a)
{
	return mix(mix(0, (uintptr_t)a->name), a->stack);
}

static bool api_eq(const struct trace_api *a, const struct trace_api *b)
{
	return a->name == b->name && a->stack == b->stack;
}

/* An operation's key: its call is the folded call's index (TRACE_NONE). */
static uint64_t op_hash(const struct trace_op *o)
{
	uint64_t h = mix(mix(0, o->kind), (uintptr_t)o->name);

	return mix(mix(mix(h, o->device), o->stream), o->api);
}

static bool op_eq(const struct trace_op *a, const struct trace_op *b)
{
	return a->kind == b->kind && a->name == b->name &&
	       a->device == b->device && a->stream == b->stream &&
	       a->api == b->api;
}

/* Open addressing over indices + 1 into an array; grows at half full. */
static int slots_grow(struct fold_slots *t, size_t n, const void *items,
		      size_t size, uint64_t (*hash)(const void *))
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	uint32_t *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return EGPU_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t j = hash((const char *)items + i * size) & (cap - 1);

		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

static uint64_t api_hash_v(const void *a)
{
	return api_hash(a);
}

static uint64_t op_hash_v(const void *o)
{
	return op_hash(o);
}

/* The folded call of @a, added if new; TRACE_NONE when out of memory. */
static uint32_t fold_api(struct fold *f, const struct trace_api *a)
{
	size_t j;

	if ((f->api_n + 1) * 2 > f->api_slots.cap &&
	    slots_grow(&f->api_slots, f->api_n, f->apis, sizeof(*f->apis),
		       api_hash_v))
		return TRACE_NONE;
	j = api_hash(a) & (f->api_slots.cap - 1);
	for (; f->api_slots.slot[j]; j = (j + 1) & (f->api_slots.cap - 1))
		if (api_eq(&f->apis[f->api_slots.slot[j] - 1], a))
			return f->api_slots.slot[j] - 1;
	if (!ARRAY_GROW(f->apis, f->api_cap, f->api_n, 256))
		return TRACE_NONE;
	/* the join of the totals (trace_join) finds it by this id */
	f->apis[f->api_n] = *a;
	f->apis[f->api_n].corr = (uint32_t)f->api_n + 1;
	f->api_slots.slot[j] = (uint32_t)++f->api_n;
	return (uint32_t)f->api_n - 1;
}

/* Add @o (its api a folded call's index) to its folded operation. */
static int fold_op(struct fold *f, const struct trace_op *o)
{
	struct trace_op *t;
	size_t j;

	if ((f->op_n + 1) * 2 > f->op_slots.cap &&
	    slots_grow(&f->op_slots, f->op_n, f->ops, sizeof(*f->ops),
		       op_hash_v))
		return EGPU_ENOMEM;
	j = op_hash(o) & (f->op_slots.cap - 1);
	for (; f->op_slots.slot[j]; j = (j + 1) & (f->op_slots.cap - 1)) {
		t = &f->ops[f->op_slots.slot[j] - 1];
		if (op_eq(t, o)) {
			t->count += op_count(o);
			t->end += op_ns(o);
			t->bytes += o->bytes;
			return 0;
		}
	}
	if (!ARRAY_GROW(f->ops, f->op_cap, f->op_n, 256))
		return EGPU_ENOMEM;
	t = &f->ops[f->op_n];
	*t = *o;
	t->count = op_count(o);
	t->end = t->start + op_ns(o);
	t->corr = o->api != TRACE_NONE ? f->apis[o->api].corr : 0;
	f->op_slots.slot[j] = (uint32_t)++f->op_n;
	return 0;
}

int fold_add(struct fold *f, const struct trace_data *td)
{
	uint32_t *api_at = malloc((td->api_cnt + 1) * sizeof(*api_at));
	struct trace_op o;
	int err = api_at ? 0 : EGPU_ENOMEM;

	for (size_t i = 0; !err && i < td->api_cnt; i++)
		if ((api_at[i] = fold_api(f, &td->apis[i])) == TRACE_NONE)
			err = EGPU_ENOMEM;
	for (size_t i = 0; !err && i < td->op_cnt; i++) {
		o = td->ops[i];
		if (!f->to || o.start < f->from)
			f->from = o.start;
		if (o.end > f->to)
			f->to = o.end;
		o.api = o.api < td->api_cnt ? api_at[o.api] : TRACE_NONE;
		err = fold_op(f, &o);
	}
	free(api_at);
	return err ? err_set(err, "trace: out of memory adding up the "
			     "trace") : 0;
}

void fold_free(struct fold *f)
{
	free(f->apis);
	free(f->ops);
	free(f->api_slots.slot);
	free(f->op_slots.slot);
	*f = (struct fold){ 0 };
}
