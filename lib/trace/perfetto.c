/* SPDX-License-Identifier: MIT */
/*
 * The timeline as Perfetto's own protobuf trace (.perfetto-trace):
 *
 *   a process track (the program) with one thread track per host thread,
 *     the CUDA API calls as slices, each with its interned call stack;
 *   a track per GPU ("GPU n") with one child track per stream ("stream
 *     S"), kernels, copies and sets as slices (copies and sets with their
 *     bytes);
 *   a flow from each call to each operation it caused: one arrow for a
 *     launch (flow id: the call's index + 1), one from the call to every
 *     operation of a graph launch.
 *
 * Each thread and stream is a packet sequence of its own (perfetto.h), its
 * slices in time order, nested where a call encloses another.
 */
#include <stdlib.h>

#include "perfetto.h"

#define UUID_PROCESS 1ull
#define UUID_THREAD(tid) ((1ull << 56) | (tid))
#define UUID_GPU(dev) ((2ull << 56) | (dev))
#define UUID_STREAM(key) ((3ull << 56) | (key))
#define MAX_DEPTH 64

/* A slice on a track: a call (on its thread) or an operation (stream). */
struct slice {
	uint64_t track;   /* tid, or device << 32 | stream */
	uint64_t start, end;
	size_t idx;
};

static int slice_cmp(const void *x, const void *y)
{
	const struct slice *a = x, *b = y;

	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	/* the enclosing slice first */
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

struct timeline {
	struct pf_writer *w;
	const struct trace_data *td;
	bool *api_joined;       /* by api: an operation was joined to it */
	uint32_t seq_next;
	bool ops;               /* the slices are operations */
};

static void put_descriptor(struct pf_writer *w,
			   Egpu__Perfetto__TrackDescriptor *d)
{
	Egpu__Perfetto__TracePacket p = EGPU__PERFETTO__TRACE_PACKET__INIT;

	p.data_case = EGPU__PERFETTO__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
	p.track_descriptor = d;
	pf_emit(w, &p);
}

static int32_t trace_pid(const struct trace_data *td)
{
	return td->pid ? (int32_t)td->pid : 1;
}

static void put_process(struct pf_writer *w)
{
	Egpu__Perfetto__TrackDescriptor d = EGPU__PERFETTO__TRACK_DESCRIPTOR__INIT;
	Egpu__Perfetto__ProcessDescriptor pd =
		EGPU__PERFETTO__PROCESS_DESCRIPTOR__INIT;
	struct strbuf name;

	sb_init(&name);
	utf8_put(&name, w->td->process ? w->td->process : "host");
	pd.has_pid = true;
	pd.pid = trace_pid(w->td);
	pd.process_name = sb_ok(&name) ? name.buf : "host";
	d.has_uuid = true;
	d.uuid = UUID_PROCESS;
	d.process = &pd;
	put_descriptor(w, &d);
	sb_free(&name);
}

/* The descriptor of @s's track: a thread, or a stream (after its GPU's
 * when @first_of_gpu). */
static uint64_t put_track(struct timeline *t, const struct slice *s,
			  bool first_of_gpu)
{
	Egpu__Perfetto__TrackDescriptor d = EGPU__PERFETTO__TRACK_DESCRIPTOR__INIT;
	Egpu__Perfetto__ThreadDescriptor th =
		EGPU__PERFETTO__THREAD_DESCRIPTOR__INIT;
	uint32_t dev = (uint32_t)(s->track >> 32);
	char name[32];

	d.has_uuid = true;
	if (!t->ops) {
		d.uuid = UUID_THREAD(s->track);
		d.has_parent_uuid = true;
		d.parent_uuid = UUID_PROCESS;
		th.has_pid = th.has_tid = true;
		th.pid = trace_pid(t->td);
		th.tid = (int64_t)s->track;
		d.thread = &th;
		put_descriptor(t->w, &d);
		return d.uuid;
	}
	if (first_of_gpu) {
		snprintf(name, sizeof(name), "GPU %u", dev);
		d.uuid = UUID_GPU(dev);
		d.name = name;
		put_descriptor(t->w, &d);
	}
	snprintf(name, sizeof(name), "stream %u", (uint32_t)s->track);
	d.uuid = UUID_STREAM(s->track);
	d.has_parent_uuid = true;
	d.parent_uuid = UUID_GPU(dev);
	d.name = name;
	put_descriptor(t->w, &d);
	return d.uuid;
}

/* What the begin of slice @s says. */
static struct pf_begin slice_begin(const struct timeline *t,
				   const struct slice *s)
{
	const struct trace_data *td = t->td;
	const struct trace_op *op = &td->ops[s->idx];
	const struct trace_api *api;

	if (!t->ops) {
		api = &td->apis[s->idx];
		return (struct pf_begin){ .name = api->name, .stack = api->stack,
			.flow = t->api_joined[s->idx] ? s->idx + 1 : 0,
			.flow_out = true, .fan = trace_api_graph(api->name) };
	}
	api = op->api < td->api_cnt ? &td->apis[op->api] : NULL;
	return (struct pf_begin){ .name = op->name, .stack = TRACE_NONE,
		.flow = api ? (uint64_t)op->api + 1 : 0,
		.fan = api && trace_api_graph(api->name),
		.bytes = op->bytes, .has_bytes = op->kind != TRACE_KERNEL };
}

/*
 * The slices of one track, sorted, as begins and ends in time order: a
 * slice that starts inside another ends with it at the latest, so they
 * nest.
 */
static void put_slices(struct timeline *t, struct pf_seq *seq,
		       const struct slice *s, size_t n)
{
	uint64_t open[MAX_DEPTH], end;
	unsigned depth = 0;
	struct pf_begin b;

	for (size_t i = 0; i < n; i++) {
		while (depth && (open[depth - 1] <= s[i].start ||
				 depth == MAX_DEPTH)) {
			depth--;
			pf_seq_end(seq, open[depth] < s[i].start ?
				   open[depth] : s[i].start);
		}
		end = s[i].end < s[i].start ? s[i].start : s[i].end;
		if (depth && end > open[depth - 1])
			end = open[depth - 1];
		b = slice_begin(t, &s[i]);
		pf_seq_begin(seq, s[i].start, &b);
		open[depth++] = end;
	}
	while (depth)
		pf_seq_end(seq, open[--depth]);
}

/* Every track of @s (sorted by track), each as a sequence. */
static int put_tracks(struct timeline *t, const struct slice *s, size_t n)
{
	struct pf_seq seq;
	size_t i = 0, j;
	int err = 0;

	for (; i < n && !err; i = j) {
		for (j = i + 1; j < n && s[j].track == s[i].track; j++)
			;
		err = pf_seq_start(&seq, t->w, t->seq_next++,
				   put_track(t, &s[i], !i ||
					     s[i - 1].track >> 32 !=
					     s[i].track >> 32));
		if (!err)
			put_slices(t, &seq, s + i, j - i);
		pf_seq_free(&seq);
	}
	return err ? err : t->w->err;
}

/* @s[0..n) sorted, as sequences; frees @s. */
static int put_sorted(struct timeline *t, struct slice *s, size_t n,
		      bool ops)
{
	int err;

	qsort(s, n, sizeof(*s), slice_cmp);
	t->ops = ops;
	err = put_tracks(t, s, n);
	free(s);
	return err;
}

static int put_calls(struct timeline *t)
{
	const struct trace_data *td = t->td;
	struct slice *s = malloc((td->api_cnt + 1) * sizeof(*s));

	if (!s)
		return EGPU_ENOMEM;
	for (size_t i = 0; i < td->api_cnt; i++)
		s[i] = (struct slice){ td->apis[i].tid, td->apis[i].start,
				       td->apis[i].end, i };
	return put_sorted(t, s, td->api_cnt, false);
}

static int put_ops(struct timeline *t)
{
	const struct trace_data *td = t->td;
	struct slice *s = malloc((td->op_cnt + 1) * sizeof(*s));

	if (!s)
		return EGPU_ENOMEM;
	for (size_t i = 0; i < td->op_cnt; i++) {
		const struct trace_op *op = &td->ops[i];

		s[i] = (struct slice){ (uint64_t)op->device << 32 | op->stream,
				       op->start, op->end, i };
	}
	return put_sorted(t, s, td->op_cnt, true);
}

int trace_write_perfetto(const struct trace_data *td, FILE *f)
{
	struct pf_writer w;
	struct timeline t = { .w = &w, .td = td, .seq_next = 1 };
	int err = pf_writer_init(&w, td, f);

	t.api_joined = calloc(td->api_cnt + 1, sizeof(*t.api_joined));
	if (!t.api_joined)
		err = EGPU_ENOMEM;
	for (size_t i = 0; !err && i < td->op_cnt; i++)
		if (td->ops[i].api < td->api_cnt)
			t.api_joined[td->ops[i].api] = true;
	if (!err) {
		put_process(&w);
		err = put_calls(&t);
	}
	if (!err)
		err = put_ops(&t);
	free(t.api_joined);
	if (err && !w.err)
		w.err = err;
	return pf_writer_done(&w);
}
