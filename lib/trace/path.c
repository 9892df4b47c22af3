/* SPDX-License-Identifier: MIT */
/* The frames of an operation's path and their order (writers.h). */
#include <stdlib.h>
#include <string.h>

#include "writers.h"

static const char *const unknown_root[] = { UNKNOWN_LAUNCH };

static const char *name_of(const char *s)
{
	return s ? s : "?";
}

void op_path(const struct trace_data *td, const struct trace_op *op,
	     bool device_tag, struct op_path *p)
{
	const struct trace_api *api;
	const struct trace_stack *st = NULL;

	p->op = op;
	p->device_tag = device_tag;
	p->host = unknown_root;
	p->host_n = 1;
	p->api = NULL;
	if (op->api == TRACE_NONE || op->api >= td->api_cnt)
		return;
	api = &td->apis[op->api];
	if (api->stack != TRACE_NONE && api->stack < td->stack_cnt)
		st = &td->stacks[api->stack];
	p->host = st ? st->frames : NULL;
	p->host_n = st ? st->n : 0;
	p->api = name_of(api->name);
	/* Collectors may or may not keep the API as the innermost frame. */
	if (p->host_n && !strcmp(name_of(p->host[p->host_n - 1]), p->api))
		p->api = NULL;
}

uint32_t path_host_depth(const struct op_path *p)
{
	return p->host_n + (p->api != NULL);
}

uint32_t path_depth(const struct op_path *p)
{
	return path_host_depth(p) + 1 + p->device_tag;
}

struct frame path_frame(const struct op_path *p, uint32_t i)
{
	struct frame f = { .kind = FRAME_HOST };

	if (i < p->host_n) {
		f.name = name_of(p->host[i]);
	} else if (i < path_host_depth(p)) {
		f.name = p->api;
	} else if (i == path_host_depth(p)) {
		f.kind = FRAME_OP;
		f.name = name_of(p->op->name);
		f.num = p->op->kind;
	} else {
		f.kind = FRAME_DEVICE;
		f.num = p->op->device;
	}
	return f;
}

static int u32_cmp(uint32_t a, uint32_t b)
{
	return (a > b) - (a < b);
}

int frame_cmp(const struct frame *a, const struct frame *b)
{
	int c = u32_cmp(a->kind, b->kind);

	if (!c && a->kind != FRAME_DEVICE)
		c = strcmp(a->name, b->name);
	if (!c && a->kind != FRAME_HOST)
		c = u32_cmp(a->num, b->num);
	return c;
}

uint32_t paths_common(const struct op_path *a, const struct op_path *b)
{
	uint32_t n = path_depth(a) < path_depth(b) ? path_depth(a) : path_depth(b);
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct frame fa = path_frame(a, i), fb = path_frame(b, i);

		if (frame_cmp(&fa, &fb))
			break;
	}
	return i;
}

/* Lexicographic order of the frames (a prefix first). */
static int path_cmp(const struct op_path *a, const struct op_path *b)
{
	uint32_t da = path_depth(a), db = path_depth(b);

	for (uint32_t i = 0; i < da && i < db; i++) {
		struct frame fa = path_frame(a, i), fb = path_frame(b, i);
		int c = frame_cmp(&fa, &fb);

		if (c)
			return c;
	}
	return u32_cmp(da, db);
}

struct order_ctx {
	const struct trace_data *td;
	enum path_order order;
	bool device_tag;
};

static int op_order(const void *x, const void *y, void *arg)
{
	const struct order_ctx *oc = arg;
	const struct trace_op *a = &oc->td->ops[*(const size_t *)x];
	const struct trace_op *b = &oc->td->ops[*(const size_t *)y];
	struct op_path pa, pb;
	int c;

	op_path(oc->td, a, oc->device_tag, &pa);
	op_path(oc->td, b, oc->device_tag, &pb);
	if (oc->order == BY_PATH)
		return path_cmp(&pa, &pb);
	c = strcmp(name_of(a->name), name_of(b->name));
	return c ? c : path_cmp(&pa, &pb);
}

static int ops_by_path(const struct trace_data *td, enum path_order order,
		       bool device_tag, size_t **idx, size_t *n)
{
	struct order_ctx oc = { td, order, device_tag };
	size_t *v = NULL, cnt = 0;

	if (td->op_cnt) {
		v = malloc(td->op_cnt * sizeof(*v));
		if (!v)
			return err_set(EGPU_ENOMEM, "trace: %zu operations to order",
				       td->op_cnt);
	}
	for (size_t i = 0; i < td->op_cnt; i++)
		if (order == BY_PATH || td->ops[i].kind == TRACE_KERNEL)
			v[cnt++] = i;
	if (cnt)
		qsort_r(v, cnt, sizeof(*v), op_order, &oc);
	*idx = v;
	*n = cnt;
	return 0;
}

int path_groups(const struct trace_data *td, enum path_order order,
		bool device_tag, struct path_group **groups, size_t *n)
{
	struct path_group *g = NULL;
	struct op_path prev, cur;
	size_t *idx = NULL, cnt = 0, gn = 0;
	int err;

	err = ops_by_path(td, order, device_tag, &idx, &cnt);
	if (err)
		return err;
	if (cnt)
		g = malloc(cnt * sizeof(*g));
	if (cnt && !g) {
		free(idx);
		return err_set(EGPU_ENOMEM, "trace: %zu operations to group", cnt);
	}
	for (size_t i = 0; i < cnt; i++) {
		const struct trace_op *op = &td->ops[idx[i]];

		op_path(td, op, device_tag, &cur);
		if (!gn || paths_common(&prev, &cur) != path_depth(&cur) ||
		    path_depth(&prev) != path_depth(&cur))
			g[gn++] = (struct path_group){ .op = idx[i] };
		g[gn - 1].ns += op_ns(op);
		g[gn - 1].ops++;
		prev = cur;
	}
	free(idx);
	*groups = g;
	*n = gn;
	return 0;
}

bool trace_multi_device(const struct trace_data *td)
{
	for (size_t i = 1; i < td->op_cnt; i++)
		if (td->ops[i].device != td->ops[0].device)
			return true;
	return false;
}

uint64_t op_ns(const struct trace_op *op)
{
	return op->end > op->start ? op->end - op->start : 0;
}
