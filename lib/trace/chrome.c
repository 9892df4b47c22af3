/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace / Perfetto JSON timeline (the "Trace Event Format"):
 *
 *   process 1, "<program>": one track per host thread with the CUDA API
 *     calls as complete ("X") events, their call stack in args.stack;
 *   process 2 + n, "GPU n": one track per stream with kernels, copies and
 *     sets as "X" events;
 *   one flow ("s" at the call, "f" bound to the operation's slice) from
 *     each call to each operation it caused: a graph launch has several.
 *
 * Times are microseconds (three decimals: nanoseconds exactly) since the
 * first call or operation of the trace.
 */
#include <stdlib.h>

#include "writers.h"

#define HOST_PID 1
#define GPU_PID(dev) (2 + (unsigned long long)(dev))

static const char *const op_cat[] = {
	[TRACE_KERNEL] = "kernel",
	[TRACE_MEMCPY] = "memcpy",
	[TRACE_MEMSET] = "memset",
};

struct chrome {
	const struct trace_data *td;
	struct strbuf sb;
	uint64_t base;   /* ns of the first event */
	bool first;      /* no event written yet: no comma */
};

/* Start an event: `{"ph":"X","name":"...",` with its separator. */
static void ev_open(struct chrome *c, const char *ph, const char *name)
{
	sb_adds(&c->sb, c->first ? "\n" : ",\n");
	c->first = false;
	sb_adds(&c->sb, "{\"ph\":\"");
	sb_adds(&c->sb, ph);
	sb_adds(&c->sb, "\",\"name\":\"");
	json_escape(&c->sb, name ? name : "?");
	sb_adds(&c->sb, "\",");
}

/* @key, punctuation included, then @v: `,"corr":7`. Millions of these:
 * no printf. */
static void put_num(struct chrome *c, const char *key, uint64_t v)
{
	sb_adds(&c->sb, key);
	put_u64(&c->sb, v);
}

/* @ns as microseconds with three decimals. */
static void put_us(struct chrome *c, const char *key, uint64_t ns)
{
	char frac[4] = { '.', (char)('0' + ns / 100 % 10),
			 (char)('0' + ns / 10 % 10), (char)('0' + ns % 10) };

	put_num(c, key, ns / 1000);
	sb_addn(&c->sb, frac, sizeof(frac));
}

/* `"pid":P,"tid":T,"ts":..[,"dur":..]` */
static void put_where(struct chrome *c, uint64_t pid, uint64_t tid,
		      uint64_t start, uint64_t end, bool dur)
{
	put_num(c, "\"pid\":", pid);
	put_num(c, ",\"tid\":", tid);
	put_us(c, ",\"ts\":", start - c->base);
	if (dur)
		put_us(c, ",\"dur\":", end > start ? end - start : 0);
}

/* Metadata naming a process or thread "@label@num". */
static void put_meta(struct chrome *c, const char *what,
		     unsigned long long pid, unsigned long long tid,
		     const char *label, unsigned long long num)
{
	ev_open(c, "M", what);
	sb_printf(&c->sb, "\"pid\":%llu,\"tid\":%llu,\"args\":{\"name\":"
		  "\"%s%llu\"}}", pid, tid, label, num);
}

struct track {
	uint32_t device, stream;
};

static int track_cmp(const void *x, const void *y)
{
	const struct track *a = x, *b = y;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return (a->stream > b->stream) - (a->stream < b->stream);
}

/* Names of the host process, each GPU and each of its streams. */
static int put_names(struct chrome *c)
{
	const struct trace_data *td = c->td;
	struct track *t = NULL;

	ev_open(c, "M", "process_name");
	sb_printf(&c->sb, "\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"", HOST_PID);
	json_escape(&c->sb, td->process ? td->process : "host");
	sb_adds(&c->sb, "\"}}");
	if (td->op_cnt && !(t = malloc(td->op_cnt * sizeof(*t))))
		return err_set(EGPU_ENOMEM, "trace: %zu GPU tracks", td->op_cnt);
	for (size_t i = 0; i < td->op_cnt; i++)
		t[i] = (struct track){ td->ops[i].device, td->ops[i].stream };
	if (td->op_cnt)
		qsort(t, td->op_cnt, sizeof(*t), track_cmp);
	for (size_t i = 0; i < td->op_cnt; i++) {
		if (i && !track_cmp(&t[i - 1], &t[i]))
			continue;
		if (!i || t[i - 1].device != t[i].device)
			put_meta(c, "process_name", GPU_PID(t[i].device), 0,
				 "GPU ", t[i].device);
		put_meta(c, "thread_name", GPU_PID(t[i].device), t[i].stream,
			 "stream ", t[i].stream);
	}
	free(t);
	return 0;
}

static void put_api(struct chrome *c, const struct trace_api *api)
{
	const struct trace_data *td = c->td;

	ev_open(c, "X", api->name);
	sb_adds(&c->sb, "\"cat\":\"cuda_api\",");
	put_where(c, HOST_PID, api->tid, api->start, api->end, true);
	put_num(c, ",\"args\":{\"corr\":", api->corr);
	if (api->stack != TRACE_NONE && api->stack < td->stack_cnt) {
		const struct trace_stack *st = &td->stacks[api->stack];

		sb_adds(&c->sb, ",\"stack\":\"");
		for (uint32_t i = 0; i < st->n; i++) {
			if (i)
				sb_adds(&c->sb, ";");
			json_escape(&c->sb, st->frames[i] ? st->frames[i] : "?");
		}
		sb_adds(&c->sb, "\"");
	}
	sb_adds(&c->sb, "}}");
}

static void put_op(struct chrome *c, const struct trace_op *op)
{
	ev_open(c, "X", op->name);
	sb_adds(&c->sb, "\"cat\":\"");
	sb_adds(&c->sb, op->kind < ARRAY_SIZE(op_cat) ? op_cat[op->kind] : "gpu");
	sb_adds(&c->sb, "\",");
	put_where(c, GPU_PID(op->device), op->stream, op->start, op->end, true);
	put_num(c, ",\"args\":{\"corr\":", op->corr);
	put_num(c, ",\"device\":", op->device);
	put_num(c, ",\"context\":", op->context);
	put_num(c, ",\"stream\":", op->stream);
	if (op->kind != TRACE_KERNEL)
		put_num(c, ",\"bytes\":", op->bytes);
	sb_adds(&c->sb, "}}");
}

/* The arrow from call @api to operation @op (@id: unique per arrow). */
static void put_flow(struct chrome *c, const struct trace_api *api,
		     const struct trace_op *op, size_t id)
{
	ev_open(c, "s", "launch");
	put_num(c, "\"cat\":\"launch\",\"id\":", id);
	sb_adds(&c->sb, ",");
	put_where(c, HOST_PID, api->tid, api->start, 0, false);
	sb_adds(&c->sb, "}");
	ev_open(c, "f", "launch");
	put_num(c, "\"cat\":\"launch\",\"id\":", id);
	sb_adds(&c->sb, ",\"bp\":\"e\",");
	put_where(c, GPU_PID(op->device), op->stream, op->start, 0, false);
	sb_adds(&c->sb, "}");
}

int trace_write_chrome(const struct trace_data *td, FILE *f)
{
	struct chrome c = { .td = td, .base = trace_first_ns(td), .first = true };
	int err;

	sb_init(&c.sb);
	sb_printf(&c.sb, "{\"displayTimeUnit\":\"ns\",\"otherData\":"
		  "{\"lost_records\":%llu},\"traceEvents\":[",
		  (unsigned long long)td->lost);
	err = put_names(&c);
	for (size_t i = 0; !err && i < td->api_cnt; i++) {
		put_api(&c, &td->apis[i]);
		out_flush(&c.sb, f);
	}
	for (size_t i = 0; !err && i < td->op_cnt; i++) {
		const struct trace_op *op = &td->ops[i];

		put_op(&c, op);
		if (op->api != TRACE_NONE && op->api < td->api_cnt)
			put_flow(&c, &td->apis[op->api], op, i + 1);
		out_flush(&c.sb, f);
	}
	sb_adds(&c.sb, "\n]}\n");
	if (err) {
		sb_free(&c.sb);
		return err;
	}
	return out_done(&c.sb, f, "Chrome trace");
}
