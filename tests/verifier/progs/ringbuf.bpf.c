/* SPDX-License-Identifier: MIT */
/* Ring buffer records: checked, bounded, released on every path. */
#include "bpf_prog.h"

struct {
	__uint(type, MAP_RINGBUF);
	__uint(max_entries, 1 << 16);
} events SEC(".maps");

struct {
	__uint(type, MAP_PERF_EVENT_ARRAY);
	__uint(key_size, 4);
	__uint(value_size, 4);
} perf SEC(".maps");

struct event {
	u64 kernel_id;
	u64 ts;
	u32 sm;
	u32 lane;
};

/* expect: accept */
SEC("gpu/entry/submit")
int submit_event(struct egpu_kernel_ctx *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		return 0;
	e->kernel_id = ctx->kernel_id;
	e->ts = bpf_get_globaltimer();
	e->sm = bpf_get_sm_id();
	e->lane = bpf_get_lane_id();
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* expect: accept */
SEC("gpu/exit/discard")
int maybe_discard(struct egpu_kernel_ctx *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		return 0;
	e->kernel_id = ctx->kernel_id;
	if (ctx->params_size > 64)
		bpf_ringbuf_discard(e, 0);
	else
		bpf_ringbuf_submit(e, 0);
	return 0;
}

/* expect: reject "neither submitted nor discarded at exit" */
SEC("gpu/entry/leak")
int leak_record(struct egpu_kernel_ctx *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		return 0;
	e->kernel_id = ctx->kernel_id;
	return 0;
}

/* expect: reject "neither submitted nor discarded at exit" */
SEC("gpu/entry/leak_sometimes")
int leak_sometimes(struct egpu_kernel_ctx *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		return 0;
	if (ctx->params_size)
		return 1;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* expect: reject "may be NULL (result of ringbuf_reserve" */
SEC("gpu/entry/unchecked_record")
int unchecked_record(struct egpu_kernel_ctx *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	e->kernel_id = ctx->kernel_id;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* expect: reject "out-of-bounds access to ring buffer record" */
SEC("gpu/entry/small_record")
int small_record(struct egpu_kernel_ctx *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&events, 8, 0);

	if (!e)
		return 0;
	e->ts = 1;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* expect: reject "is not initialised (invalidated by insn" */
SEC("gpu/entry/use_after_submit")
int use_after_submit(struct egpu_kernel_ctx *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		return 0;
	bpf_ringbuf_submit(e, 0);
	e->kernel_id = ctx->kernel_id;
	return 0;
}

/* expect: accept */
SEC("gpu/exit/output")
int output_event(struct egpu_kernel_ctx *ctx)
{
	struct event e = {
		.kernel_id = ctx->kernel_id,
		.ts = bpf_get_globaltimer(),
	};

	return bpf_ringbuf_output(&events, &e, sizeof(e), 0);
}

/* expect: accept */
SEC("gpu/exit/perf")
int perf_event(struct egpu_kernel_ctx *ctx)
{
	struct event e = { .kernel_id = ctx->kernel_id };

	return bpf_perf_event_output(ctx, &perf, 0xffffffffULL, &e,
				     sizeof(e));
}

/* expect: reject "reading uninitialised stack" */
SEC("gpu/exit/perf_uninit")
int perf_uninit(struct egpu_kernel_ctx *ctx)
{
	struct event e;

	e.kernel_id = ctx->kernel_id;
	return bpf_perf_event_output(ctx, &perf, 0xffffffffULL, &e,
				     sizeof(e));
}

/* expect: accept */
SEC("gpu/entry/two_records")
int two_records(struct egpu_kernel_ctx *ctx)
{
	struct event *a = bpf_ringbuf_reserve(&events, sizeof(*a), 0);
	struct event *b;

	if (!a)
		return 0;
	b = bpf_ringbuf_reserve(&events, sizeof(*b), 0);
	if (!b) {
		bpf_ringbuf_discard(a, 0);
		return 0;
	}
	a->ts = b->ts = bpf_get_globaltimer();
	bpf_ringbuf_submit(a, 0);
	bpf_ringbuf_submit(b, 0);
	return 0;
}
