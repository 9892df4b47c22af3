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
 *     launch (its id reused once it ended: perfetto_flow.c), one from the
 *     call to every operation of a graph launch.
 *
 * Each thread and stream is a packet sequence of its own (perfetto.h), its
 * slices in time order, nested where a call encloses another.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* A track of the stream and its sequence. */
struct pf_track {
	bool op;                /* a GPU stream, else a host thread */
	uint64_t key;           /* tid, or device << 32 | stream */
	bool live;              /* its sequence started in the current file */
	struct pf_seq seq;
};

struct pf_stream {
	struct pf_writer w;
	struct pf_stream_opts opts;
	char *path;             /* NULL: a FILE of the caller's */
	struct pf_track *tracks;
	size_t track_n, track_cap;
	struct pf_flows flows;
	uint32_t files;         /* files begun */
	bool process_sent;      /* in the current file */
	bool full;              /* stopped at max_size */
};

struct timeline {
	struct pf_stream *st;
	const struct trace_data *td;
	uint64_t *flow;         /* by api: its flow's id, 0: none */
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

/* The descriptor of track @tr: a thread, or a stream after its GPU's (a
 * reader takes a descriptor given again). Returns its uuid. */
static uint64_t put_track(struct pf_writer *w, const struct pf_track *tr)
{
	Egpu__Perfetto__TrackDescriptor d = EGPU__PERFETTO__TRACK_DESCRIPTOR__INIT;
	Egpu__Perfetto__ThreadDescriptor th =
		EGPU__PERFETTO__THREAD_DESCRIPTOR__INIT;
	uint32_t dev = (uint32_t)(tr->key >> 32);
	char name[32];

	d.has_uuid = true;
	if (!tr->op) {
		d.uuid = UUID_THREAD(tr->key);
		d.has_parent_uuid = true;
		d.parent_uuid = UUID_PROCESS;
		th.has_pid = th.has_tid = true;
		th.pid = trace_pid(w->td);
		th.tid = (int64_t)tr->key;
		d.thread = &th;
		put_descriptor(w, &d);
		return d.uuid;
	}
	snprintf(name, sizeof(name), "GPU %u", dev);
	d.uuid = UUID_GPU(dev);
	d.name = name;
	put_descriptor(w, &d);
	snprintf(name, sizeof(name), "stream %u", (uint32_t)tr->key);
	d.uuid = UUID_STREAM(tr->key);
	d.has_parent_uuid = true;
	d.parent_uuid = UUID_GPU(dev);
	d.name = name;
	put_descriptor(w, &d);
	return d.uuid;
}

/* Track @tr in the current file from @t0 on: the process's descriptor
 * first in a file, then the track's, then its sequence's start. */
static void process_begin(struct pf_stream *st)
{
	if (!st->process_sent)
		put_process(&st->w);
	st->process_sent = true;
}

static int track_begin(struct pf_stream *st, struct pf_track *tr, uint64_t t0)
{
	process_begin(st);
	tr->live = true;
	return pf_seq_start(&tr->seq, &st->w, (uint32_t)(tr - st->tracks) + 1,
			    put_track(&st->w, tr), t0);
}

/* The track of @s, started in the current file; NULL when out of memory. */
static struct pf_track *track_of(struct timeline *t, const struct slice *s)
{
	struct pf_stream *st = t->st;
	struct pf_track *tr = NULL;

	for (size_t i = 0; i < st->track_n && !tr; i++)
		if (st->tracks[i].op == t->ops && st->tracks[i].key == s->track)
			tr = &st->tracks[i];
	if (!tr) {
		if (!ARRAY_GROW(st->tracks, st->track_cap, st->track_n, 16))
			return NULL;
		tr = &st->tracks[st->track_n++];
		*tr = (struct pf_track){ .op = t->ops, .key = s->track };
	}
	if (!tr->live && track_begin(st, tr, s->start))
		return NULL;
	return tr;
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
			.flow = t->flow[s->idx],
			.flow_out = true, .fan = trace_api_graph(api->name) };
	}
	api = op->api < td->api_cnt ? &td->apis[op->api] : NULL;
	return (struct pf_begin){ .name = op->name, .stack = TRACE_NONE,
		.flow = api ? t->flow[op->api] : 0,
		.fan = api && trace_api_graph(api->name),
		.bytes = op->bytes, .has_bytes = op->kind != TRACE_KERNEL };
}

/* The file's files: PATH, then STEM.N.EXT for the Nth older one. */
static char *rotated_name(const char *path, uint32_t n)
{
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(slash ? slash + 1 : path, '.');
	size_t stem = dot ? (size_t)(dot - path) : strlen(path);
	struct strbuf sb;

	sb_init(&sb);
	sb_printf(&sb, "%.*s.%u%s", (int)stem, path, n, dot ? dot : "");
	return sb_detach(&sb, NULL);
}

/* Shift the old files by one (the oldest goes) and begin PATH again. */
static int rotate(struct pf_stream *st)
{
	char *from, *to;
	int err = 0;

	if (fclose(st->w.f))
		err = err_set(EGPU_EIO, "trace: %s: %s", st->path, strerror(errno));
	st->w.f = NULL;
	for (uint32_t n = st->opts.max_files - 1; n >= 1 && !err; n--) {
		from = n > 1 ? rotated_name(st->path, n - 1) : strdup(st->path);
		to = rotated_name(st->path, n);
		if (!from || !to)
			err = err_set(EGPU_ENOMEM, "trace: out of memory");
		else if (rename(from, to) && errno != ENOENT)
			err = err_set(EGPU_EIO, "trace: renaming %s to %s: %s",
				      from, to, strerror(errno));
		free(from);
		free(to);
	}
	if (!err && !(st->w.f = fopen(st->path, "wb")))
		err = err_set(EGPU_EIO, "trace: %s: %s", st->path,
			      strerror(errno));
	return err;
}

/*
 * Between two slices of a track (@tr's, at @ts): once the file has
 * reached max_size less a sixteenth (the room for what one slice and
 * the names it interns add), begin the next file, or stop. Returns
 * whether to go on.
 */
static bool room(struct pf_stream *st, struct pf_track *tr, uint64_t ts)
{
	uint64_t max = st->opts.max_size;

	if (st->full)
		return false;
	if (!max || st->w.written + st->w.out.len < max - max / 16)
		return true;
	if (pf_flush(&st->w))
		return false;
	if (st->opts.max_files < 2) {
		st->full = true;
		return false;
	}
	if (rotate(st)) {
		st->w.err = egpu_errcode();
		return false;
	}
	st->files++;
	st->w.written = 0;
	st->process_sent = false;
	for (size_t i = 0; i < st->track_n; i++)
		st->tracks[i].live = false;
	return !track_begin(st, tr, ts < tr->seq.ts ? tr->seq.ts : ts);
}

/*
 * The slices of one track, sorted, as begins and ends in time order: a
 * slice that starts inside another ends with it at the latest, so they
 * nest. A file ends between two outermost slices.
 */
static void put_slices(struct timeline *t, struct pf_track *tr,
		       const struct slice *s, size_t n)
{
	uint64_t open[MAX_DEPTH], end;
	unsigned depth = 0;
	struct pf_begin b;

	for (size_t i = 0; i < n; i++) {
		while (depth && (open[depth - 1] <= s[i].start ||
				 depth == MAX_DEPTH)) {
			depth--;
			pf_seq_end(&tr->seq, open[depth] < s[i].start ?
				   open[depth] : s[i].start);
		}
		if (!depth && !room(t->st, tr, s[i].start))
			return;
		end = s[i].end < s[i].start ? s[i].start : s[i].end;
		if (depth && end > open[depth - 1])
			end = open[depth - 1];
		b = slice_begin(t, &s[i]);
		pf_seq_begin(&tr->seq, s[i].start, &b);
		open[depth++] = end;
	}
	while (depth)
		pf_seq_end(&tr->seq, open[--depth]);
}

/* Every track of @s (sorted by track). */
static int put_tracks(struct timeline *t, const struct slice *s, size_t n)
{
	struct pf_track *tr;
	size_t i = 0, j;

	for (; i < n && !t->st->w.err && !t->st->full; i = j) {
		for (j = i + 1; j < n && s[j].track == s[i].track; j++)
			;
		if (!(tr = track_of(t, &s[i])))
			return t->st->w.err ? t->st->w.err : EGPU_ENOMEM;
		put_slices(t, tr, s + i, j - i);
	}
	return t->st->w.err;
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

static struct pf_stream *stream_new(FILE *f)
{
	struct pf_stream *st = calloc(1, sizeof(*st));

	if (st) {
		pf_writer_init(&st->w, f);
		st->files = 1;
	}
	return st;
}

struct pf_stream *pf_stream_file(FILE *f)
{
	return stream_new(f);
}

struct pf_stream *pf_stream_open(const char *path,
				 const struct pf_stream_opts *opts)
{
	struct pf_stream *st = stream_new(NULL);

	if (!st || !(st->path = strdup(path))) {
		free(st);
		err_set(EGPU_ENOMEM, "trace: out of memory");
		return NULL;
	}
	st->opts = *opts;
	if (!(st->w.f = fopen(path, "wb"))) {
		err_set(EGPU_EIO, "trace: %s: %s", path, strerror(errno));
		free(st->path);
		free(st);
		return NULL;
	}
	return st;
}

int pf_stream_put(struct pf_stream *st, const struct trace_data *td,
		  uint64_t flow_from)
{
	struct timeline t = { .st = st, .td = td };
	int err;

	if (st->w.err || st->full)
		return st->w.err;
	st->w.td = td;
	process_begin(st);
	t.flow = pf_flow_ids(&st->flows, td, flow_from);
	err = t.flow ? put_calls(&t) : EGPU_ENOMEM;
	if (!err)
		err = put_ops(&t);
	free(t.flow);
	if (err && !st->w.err)
		st->w.err = err;
	/* other errors were said where they happened */
	if (st->w.err == EGPU_ENOMEM)
		return err_set(EGPU_ENOMEM, "trace: out of memory writing the "
			       "Perfetto trace");
	return st->w.err;
}

bool pf_stream_full(const struct pf_stream *st)
{
	return st->full;
}

int pf_stream_close(struct pf_stream *st)
{
	int err;

	if (!st)
		return 0;
	err = pf_flush(&st->w);
	if (st->path ? st->w.f && fclose(st->w.f) : fflush(st->w.f) != 0)
		err = err ? err : err_set(EGPU_EIO, "trace: writing the "
					  "Perfetto trace: %s", strerror(errno));
	for (size_t i = 0; i < st->track_n; i++)
		pf_seq_free(&st->tracks[i].seq);
	free(st->tracks);
	pf_flows_free(&st->flows);
	pf_writer_free(&st->w);
	free(st->path);
	free(st);
	if (err == EGPU_ENOMEM)
		return err_set(err, "trace: out of memory writing the "
			       "Perfetto trace");
	return err;   /* an EIO was said where it happened */
}

int trace_write_perfetto(const struct trace_data *td, FILE *f)
{
	struct pf_stream *st = pf_stream_file(f);
	int err;

	if (!st)
		return err_set(EGPU_ENOMEM, "trace: out of memory writing the "
			       "Perfetto trace");
	err = pf_stream_put(st, td, 0);
	return pf_stream_close(st) ? egpu_errcode() : err;
}
