/* SPDX-License-Identifier: MIT */
/*
 * trace_join(): each GPU operation to the API call that caused it, by
 * CUPTI correlation id. A graph launch is one API call with many
 * operations, so many operations may name the same call.
 *
 * The calls are sorted by correlation id in place (usually they already
 * are: CUPTI numbers calls as they start) and searched by bisection, so
 * joining needs no memory and cannot fail.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "trace.h"

static int api_order(const void *x, const void *y)
{
	const struct trace_api *a = x, *b = y;

	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->tid > b->tid) - (a->tid < b->tid);
}

static bool apis_sorted(const struct trace_data *td)
{
	for (size_t i = 1; i < td->api_cnt; i++)
		if (api_order(&td->apis[i - 1], &td->apis[i]) > 0)
			return false;
	return true;
}

/* The first call with correlation id @corr, or TRACE_NONE. */
static uint32_t api_find(const struct trace_data *td, uint32_t corr)
{
	size_t lo = 0, hi = td->api_cnt;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (td->apis[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < td->api_cnt && td->apis[lo].corr == corr && lo < TRACE_NONE)
		return (uint32_t)lo;
	return TRACE_NONE;
}

size_t trace_join(struct trace_data *td)
{
	size_t kernels = 0;

	if (!apis_sorted(td))
		qsort(td->apis, td->api_cnt, sizeof(*td->apis), api_order);
	for (size_t i = 0; i < td->op_cnt; i++) {
		struct trace_op *op = &td->ops[i];

		op->api = api_find(td, op->corr);
		if (op->api != TRACE_NONE && op->kind == TRACE_KERNEL)
			kernels += op_count(op);
	}
	return kernels;
}

uint64_t trace_first_ns(const struct trace_data *td)
{
	uint64_t t = UINT64_MAX;

	for (size_t i = 0; i < td->api_cnt; i++)
		if (td->apis[i].start < t)
			t = td->apis[i].start;
	for (size_t i = 0; i < td->op_cnt; i++)
		if (td->ops[i].start < t)
			t = td->ops[i].start;
	return t == UINT64_MAX ? 0 : t;
}
