/* SPDX-License-Identifier: MIT */
/* The frames of an operation's path and their order (writers.h). */
#include <string.h>

#include "writers.h"

static const char *const unknown_root[] = { UNKNOWN_LAUNCH };

bool trace_api_graph(const char *name)
{
	return name && (!strncmp(name, "cudaGraphLaunch", 15) ||
			!strncmp(name, "cuGraphLaunch", 13));
}

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

	/* Collectors intern names: equal pointers are the common case. */
	if (!c && a->kind != FRAME_DEVICE && a->name != b->name)
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
