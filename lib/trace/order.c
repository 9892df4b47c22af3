/* SPDX-License-Identifier: MIT */
/*
 * Operations grouped by path, in path order (writers.h), fast enough for
 * millions of operations: paths are not compared operation by
 * operation. Each operation's host part (which stack, which API) and its
 * own frame (kind, name) are first reduced to ranks: the distinct ones,
 * usually few, are sorted by their text and numbered, equal text giving
 * equal numbers. Operations then sort by (host, operation, device) ranks.
 *
 * That is the frames' lexicographic order with a host part that is a
 * prefix of another first, so paths sharing a prefix stay adjacent.
 */
#include <stdlib.h>
#include <string.h>

#include "writers.h"

/* What to rank, for each selected operation. */
struct item {
	uintptr_t id[3];  /* identity: equal ids have equal text */
	size_t op;        /* index in trace_data.ops */
	size_t pos;       /* index among the selected operations */
	uint32_t rank;
};

struct rank_ctx {
	const struct trace_data *td;
	int (*text_cmp)(const struct trace_data *td, size_t a, size_t b);
};

static int id_cmp(const void *x, const void *y)
{
	const struct item *a = x, *b = y;

	for (int i = 0; i < 3; i++)
		if (a->id[i] != b->id[i])
			return a->id[i] < b->id[i] ? -1 : 1;
	return 0;
}

static int text_order(const void *x, const void *y, void *arg)
{
	const struct rank_ctx *rc = arg;
	const struct item *a = *(struct item *const *)x;
	const struct item *b = *(struct item *const *)y;

	return rc->text_cmp(rc->td, a->op, b->op);
}

/* Host parts: stack frames then the API, a prefix first. */
static int host_cmp(const struct trace_data *td, size_t a, size_t b)
{
	struct op_path pa, pb;
	uint32_t da, db;

	op_path(td, &td->ops[a], false, &pa);
	op_path(td, &td->ops[b], false, &pb);
	da = path_host_depth(&pa);
	db = path_host_depth(&pb);
	for (uint32_t i = 0; i < da && i < db; i++) {
		struct frame fa = path_frame(&pa, i), fb = path_frame(&pb, i);
		int c = frame_cmp(&fa, &fb);

		if (c)
			return c;
	}
	return (da > db) - (da < db);
}

static int opframe_cmp(const struct trace_data *td, size_t a, size_t b)
{
	struct op_path pa, pb;
	struct frame fa, fb;

	op_path(td, &td->ops[a], false, &pa);
	op_path(td, &td->ops[b], false, &pb);
	fa = path_frame(&pa, path_host_depth(&pa));
	fb = path_frame(&pb, path_host_depth(&pb));
	return frame_cmp(&fa, &fb);
}

/*
 * Number @it by their text: sorted by id, one representative per id is
 * sorted by text, then the ranks go back to every item.
 */
static int rank_items(struct rank_ctx *rc, struct item *it, size_t n)
{
	struct item **rep;
	size_t reps = 0;
	uint32_t rank = 0;

	qsort(it, n, sizeof(*it), id_cmp);
	rep = malloc(n * sizeof(*rep));
	if (!rep)
		return err_set(EGPU_ENOMEM, "trace: %zu paths to order", n);
	for (size_t i = 0; i < n; i++)
		if (!i || id_cmp(&it[i - 1], &it[i]))
			rep[reps++] = &it[i];
	qsort_r(rep, reps, sizeof(*rep), text_order, rc);
	for (size_t i = 0; i < reps; i++) {
		if (i && rc->text_cmp(rc->td, rep[i - 1]->op, rep[i]->op))
			rank++;
		rep[i]->rank = rank;
	}
	for (size_t i = 1; i < n; i++)
		if (!id_cmp(&it[i - 1], &it[i]))
			it[i].rank = it[i - 1].rank;
	free(rep);
	return 0;
}

struct key {
	uint32_t r[3];  /* ranks, most significant first */
	size_t op;
};

static int key_cmp(const void *x, const void *y)
{
	const struct key *a = x, *b = y;

	for (int i = 0; i < 3; i++)
		if (a->r[i] != b->r[i])
			return a->r[i] < b->r[i] ? -1 : 1;
	return (a->op > b->op) - (a->op < b->op);
}

/* Host and operation ranks of the @n selected operations into @k. */
static int rank_ops(const struct trace_data *td, struct key *k, size_t n,
		    struct item *it, enum path_order order)
{
	struct rank_ctx host = { td, host_cmp }, opf = { td, opframe_cmp };
	int hi = order == BY_PATH ? 0 : 1; /* where the host rank goes */
	struct op_path p;
	int err;

	for (size_t i = 0; i < n; i++) {
		op_path(td, &td->ops[k[i].op], false, &p);
		it[i] = (struct item){ .id = { (uintptr_t)p.host, p.host_n,
					       (uintptr_t)p.api },
				       .op = k[i].op, .pos = i };
	}
	err = rank_items(&host, it, n);
	for (size_t i = 0; !err && i < n; i++)
		k[it[i].pos].r[hi] = it[i].rank;
	for (size_t i = 0; !err && i < n; i++) {
		const struct trace_op *op = &td->ops[k[i].op];

		it[i] = (struct item){ .id = { op->kind, (uintptr_t)op->name },
				       .op = k[i].op, .pos = i };
	}
	if (!err)
		err = rank_items(&opf, it, n);
	for (size_t i = 0; !err && i < n; i++)
		k[it[i].pos].r[1 - hi] = it[i].rank;
	return err;
}

/* The selected operations' keys, sorted. */
static int sorted_keys(const struct trace_data *td, enum path_order order,
		       bool device_tag, struct key **keys, size_t *n)
{
	struct key *k = NULL;
	struct item *it = NULL;
	size_t cnt = 0;
	int err = 0;

	if (td->op_cnt) {
		k = malloc(td->op_cnt * sizeof(*k));
		it = malloc(td->op_cnt * sizeof(*it));
		if (!k || !it)
			err = err_set(EGPU_ENOMEM, "trace: %zu operations to order",
				      td->op_cnt);
	}
	for (size_t i = 0; !err && i < td->op_cnt; i++)
		if (order == BY_PATH || td->ops[i].kind == TRACE_KERNEL)
			k[cnt++] = (struct key){ { 0, 0, device_tag ?
						   td->ops[i].device : 0 }, i };
	if (!err && cnt) {
		err = rank_ops(td, k, cnt, it, order);
		qsort(k, cnt, sizeof(*k), key_cmp);
	}
	free(it);
	if (err) {
		free(k);
		return err;
	}
	*keys = k;
	*n = cnt;
	return 0;
}

int path_groups(const struct trace_data *td, enum path_order order,
		bool device_tag, struct path_group **groups, size_t *n)
{
	struct path_group *g = NULL;
	struct key *k = NULL;
	size_t cnt = 0, gn = 0;
	int err;

	err = sorted_keys(td, order, device_tag, &k, &cnt);
	if (err)
		return err;
	if (cnt && !(g = malloc(cnt * sizeof(*g)))) {
		free(k);
		return err_set(EGPU_ENOMEM, "trace: %zu operations to group", cnt);
	}
	for (size_t i = 0; i < cnt; i++) {
		if (!i || memcmp(k[i - 1].r, k[i].r, sizeof(k[i].r)))
			g[gn++] = (struct path_group){ .op = k[i].op };
		g[gn - 1].ns += op_ns(&td->ops[k[i].op]);
		g[gn - 1].ops += op_count(&td->ops[k[i].op]);
	}
	free(k);
	*groups = g;
	*n = gn;
	return 0;
}
