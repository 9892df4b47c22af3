/* SPDX-License-Identifier: MIT */
/*
 * A trace as a pprof Profile: one sample per distinct (CPU path, device,
 * stream, graph or not) with two values, GPU nanoseconds and launches
 * (operations run). The path's frames become locations, leaf first as
 * pprof wants: the GPU operation ("[GPU_Kernel]name", as in the folded
 * output), the launch API, then the host frames. Each location has one
 * line of its own function. Labels: device, stream, and graph ("true"
 * for operations of a graph launch).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/pprof.h"
#include "profile.pb-c.h"
#include "trace/writers.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__ValueType ValueType;

enum { LABEL_DEVICE, LABEL_STREAM, LABEL_GRAPH, LABEL_CNT };

/* One sample being summed: its locations and label values. */
struct acc {
	uint64_t *locs;     /* location ids, leaf first */
	uint32_t nloc;
	uint32_t device, stream;
	bool graph;
	int64_t ns, ops;
};

struct builder {
	struct intern strings;  /* the string table; "" is id 0 */
	struct intern frames;   /* frame text; function and location id - 1 */
	struct intern keys;     /* sample keys; index into accs */
	struct acc *accs;
	size_t acc_cap;
	uint64_t *locs;         /* the current path's, leaf first */
	uint32_t loc_cap;
};

static int str_id(struct builder *b, const char *s, int64_t *id)
{
	uint32_t v;
	int err = intern(&b->strings, s, strlen(s), &v);

	*id = v;
	return err;
}

/* The location id of frame @i of @p: its folded text, made UTF-8. */
static int frame_loc(struct builder *b, const struct op_path *p, uint32_t i,
		     struct strbuf *sb, uint64_t *loc)
{
	struct frame f = path_frame(p, i);
	struct strbuf text;
	uint32_t id;
	int err;

	sb_init(&text);
	frame_put(&text, &f);
	sb->len = 0;
	utf8_put(sb, text.buf ? text.buf : "");
	sb_free(&text);
	if (!sb_ok(sb))
		return err_set(EGPU_ENOMEM, "pprof: out of memory");
	err = intern(&b->frames, sb->buf, sb->len, &id);
	*loc = (uint64_t)id + 1;
	return err;
}

/* The path of @op into b->locs, leaf first; its depth in *n. */
static int op_locs(struct builder *b, const struct trace_data *td,
		   const struct trace_op *op, struct strbuf *sb, uint32_t *n)
{
	struct op_path p;
	int err = 0;

	op_path(td, op, false, &p);
	*n = path_depth(&p);
	if (*n > b->loc_cap) {
		uint64_t *locs = realloc(b->locs, *n * sizeof(*locs));

		if (!locs)
			return err_set(EGPU_ENOMEM, "pprof: out of memory");
		b->locs = locs;
		b->loc_cap = *n;
	}
	for (uint32_t i = 0; i < *n && !err; i++)
		err = frame_loc(b, &p, i, sb, &b->locs[*n - 1 - i]);
	return err;
}

static bool op_graph(const struct trace_data *td, const struct trace_op *op)
{
	return op->api != TRACE_NONE && op->api < td->api_cnt &&
	       trace_api_graph(td->apis[op->api].name);
}

/* Room for one sample more than there are keys. */
static int acc_room(struct builder *b)
{
	size_t cap = b->acc_cap ? b->acc_cap * 2 : 64;
	struct acc *accs;

	if (b->keys.n < b->acc_cap)
		return 0;
	accs = realloc(b->accs, cap * sizeof(*accs));
	if (!accs)
		return err_set(EGPU_ENOMEM, "pprof: out of memory");
	b->accs = accs;
	b->acc_cap = cap;
	return 0;
}

/* The sample @op belongs to, made when new. */
static int op_acc(struct builder *b, const struct trace_data *td,
		  const struct trace_op *op, struct strbuf *sb, struct acc **a)
{
	bool graph = op_graph(td, op);
	size_t known = b->keys.n;
	uint32_t n, id;
	int err = op_locs(b, td, op, sb, &n);

	if (err || (err = acc_room(b)))
		return err;
	sb->len = 0;
	for (uint32_t i = 0; i < n; i++)
		sb_printf(sb, "%" PRIu64 ",", b->locs[i]);
	sb_printf(sb, "|%u|%u|%d", op->device, op->stream, graph);
	if (!sb_ok(sb) || intern(&b->keys, sb->buf, sb->len, &id))
		return err_set(EGPU_ENOMEM, "pprof: out of memory");
	*a = &b->accs[id];
	if (b->keys.n == known)
		return 0;
	**a = (struct acc){ .nloc = n, .device = op->device,
			    .stream = op->stream, .graph = graph,
			    .locs = malloc(n * sizeof(uint64_t)) };
	if (!(*a)->locs)
		return err_set(EGPU_ENOMEM, "pprof: out of memory");
	memcpy((*a)->locs, b->locs, n * sizeof(uint64_t));
	return 0;
}

static int collect(struct builder *b, const struct trace_data *td,
		   bool no_copies)
{
	struct strbuf sb;
	int err = 0;

	sb_init(&sb);
	for (size_t i = 0; i < td->op_cnt && !err; i++) {
		const struct trace_op *op = &td->ops[i];
		struct acc *a = NULL;

		if (no_copies && op->kind != TRACE_KERNEL)
			continue;
		err = op_acc(b, td, op, &sb, &a);
		if (!err) {
			a->ns += (int64_t)op_ns(op);
			a->ops += (int64_t)op_count(op);
		}
	}
	sb_free(&sb);
	return err;
}

/* Where a frame's function lives: its name, file and line. */
struct frame_at {
	const char *fn, *file;
	size_t fn_len, file_len;
	int64_t line;          /* 0: unknown */
};

/*
 * A Python frame of the tracer, "function (file:line)", split; false for
 * any other text.
 */
static bool python_frame(const char *text, struct frame_at *at)
{
	const char *open = strstr(text, " ("), *end = text + strlen(text);
	const char *colon = end;

	if (!open || end - open < 5 || end[-1] != ')')
		return false;
	while (colon > open && colon[-1] >= '0' && colon[-1] <= '9')
		colon--;
	if (colon == end - 1 || colon[-1] != ':')
		return false;
	*at = (struct frame_at){ text, open + 2, (size_t)(open - text),
		(size_t)(colon - 1 - (open + 2)), strtoll(colon, NULL, 10) };
	return true;
}

/*
 * A frame's function, file and line: a Python frame's own, the library
 * of "lib.so+0x1a2b", else the name alone.
 */
static void frame_at(const char *text, struct frame_at *at)
{
	const char *plus = strstr(text, "+0x");

	if (python_frame(text, at))
		return;
	*at = (struct frame_at){ text, text, strlen(text),
		plus ? (size_t)(plus - text) : 0, 0 };
}

/* The message's storage: every array it points into. */
struct message {
	Profile prof;
	ValueType types[2], *type_ptrs[2];
	Sample *samples, **sample_ptrs;
	int64_t *values;
	Label *labels, **label_ptrs;
	Function *funcs, **func_ptrs;
	Location *locs, **loc_ptrs;
	Line *lines, **line_ptrs;
};

static int functions(struct builder *b, struct message *m)
{
	size_t n = b->frames.n;
	int err = 0;

	m->funcs = calloc(n, sizeof(*m->funcs));
	m->func_ptrs = calloc(n, sizeof(*m->func_ptrs));
	m->locs = calloc(n, sizeof(*m->locs));
	m->loc_ptrs = calloc(n, sizeof(*m->loc_ptrs));
	m->lines = calloc(n, sizeof(*m->lines));
	m->line_ptrs = calloc(n, sizeof(*m->line_ptrs));
	if (n && (!m->funcs || !m->func_ptrs || !m->locs || !m->loc_ptrs ||
		  !m->lines || !m->line_ptrs))
		return err_set(EGPU_ENOMEM, "pprof: out of memory");
	for (size_t i = 0; i < n && !err; i++) {
		const char *text = b->frames.strs[i];
		Function *f = &m->funcs[i];
		uint32_t name = 0, fid = 0;
		struct frame_at at;

		perftools__profiles__function__init(f);
		perftools__profiles__line__init(&m->lines[i]);
		perftools__profiles__location__init(&m->locs[i]);
		f->id = m->locs[i].id = m->lines[i].function_id = i + 1;
		frame_at(text, &at);
		err = intern(&b->strings, at.fn, at.fn_len, &name);
		if (!err)
			err = intern(&b->strings, at.file, at.file_len, &fid);
		f->name = f->system_name = name;
		f->filename = fid;
		m->lines[i].line = at.line;
		m->line_ptrs[i] = &m->lines[i];
		m->locs[i].n_line = 1;
		m->locs[i].line = &m->line_ptrs[i];
		m->func_ptrs[i] = f;
		m->loc_ptrs[i] = &m->locs[i];
	}
	m->prof.n_function = m->prof.n_location = n;
	m->prof.function = m->func_ptrs;
	m->prof.location = m->loc_ptrs;
	return err;
}

/* Labels as strings: pprof drops a numeric label of 0 (device 0). */
static int sample_labels(struct builder *b, const struct acc *a, Label *l)
{
	static const char *const keys[LABEL_CNT] = {
		[LABEL_DEVICE] = "device", [LABEL_STREAM] = "stream",
		[LABEL_GRAPH] = "graph",
	};
	char vals[LABEL_CNT][16];
	int err = 0;

	snprintf(vals[LABEL_DEVICE], sizeof(vals[0]), "%u", a->device);
	snprintf(vals[LABEL_STREAM], sizeof(vals[0]), "%u", a->stream);
	snprintf(vals[LABEL_GRAPH], sizeof(vals[0]), "%s",
		 a->graph ? "true" : "false");
	for (int i = 0; i < LABEL_CNT && !err; i++) {
		perftools__profiles__label__init(&l[i]);
		err = str_id(b, keys[i], &l[i].key);
		if (!err)
			err = str_id(b, vals[i], &l[i].str);
	}
	return err;
}

static int samples(struct builder *b, struct message *m)
{
	size_t n = b->keys.n;
	int err = 0;

	m->samples = calloc(n, sizeof(*m->samples));
	m->sample_ptrs = calloc(n, sizeof(*m->sample_ptrs));
	m->values = calloc(2 * n, sizeof(*m->values));
	m->labels = calloc(LABEL_CNT * n, sizeof(*m->labels));
	m->label_ptrs = calloc(LABEL_CNT * n, sizeof(*m->label_ptrs));
	if (n && (!m->samples || !m->sample_ptrs || !m->values ||
		  !m->labels || !m->label_ptrs))
		return err_set(EGPU_ENOMEM, "pprof: out of memory");
	for (size_t i = 0; i < n && !err; i++) {
		Sample *s = &m->samples[i];

		perftools__profiles__sample__init(s);
		s->n_location_id = b->accs[i].nloc;
		s->location_id = b->accs[i].locs;
		s->n_value = 2;
		s->value = &m->values[2 * i];
		s->value[0] = b->accs[i].ns;
		s->value[1] = b->accs[i].ops;
		s->n_label = LABEL_CNT;
		s->label = &m->label_ptrs[LABEL_CNT * i];
		for (int l = 0; l < LABEL_CNT; l++)
			s->label[l] = &m->labels[LABEL_CNT * i + l];
		err = sample_labels(b, &b->accs[i], &m->labels[LABEL_CNT * i]);
		m->sample_ptrs[i] = s;
	}
	m->prof.n_sample = n;
	m->prof.sample = m->sample_ptrs;
	return err;
}

/* Sample types: GPU time (the default) and launches. */
static int sample_types(struct builder *b, struct message *m)
{
	static const char *const names[2][2] = {
		{ "gpu", "nanoseconds" }, { "launches", "count" },
	};
	int err = 0;

	for (int i = 0; i < 2 && !err; i++) {
		perftools__profiles__value_type__init(&m->types[i]);
		err = str_id(b, names[i][0], &m->types[i].type);
		if (!err)
			err = str_id(b, names[i][1], &m->types[i].unit);
		m->type_ptrs[i] = &m->types[i];
	}
	m->prof.n_sample_type = 2;
	m->prof.sample_type = m->type_ptrs;
	m->prof.default_sample_type = m->types[0].type;
	return err;
}

/* First and last GPU times of the trace, for duration_nanos. */
static int64_t trace_span(const struct trace_data *td)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	if (td->ops_to)
		return (int64_t)(td->ops_to - td->ops_from);
	for (size_t i = 0; i < td->op_cnt; i++) {
		if (td->ops[i].start < lo)
			lo = td->ops[i].start;
		if (td->ops[i].end > hi)
			hi = td->ops[i].end;
	}
	return hi > lo ? (int64_t)(hi - lo) : 0;
}

static int pack(struct message *m, uint8_t **buf, size_t *len)
{
	*len = perftools__profiles__profile__get_packed_size(&m->prof);
	*buf = malloc(*len ? *len : 1);
	if (!*buf)
		return err_set(EGPU_ENOMEM, "pprof: out of memory");
	perftools__profiles__profile__pack(&m->prof, *buf);
	return 0;
}

static void message_free(struct message *m)
{
	free(m->samples);
	free(m->sample_ptrs);
	free(m->values);
	free(m->labels);
	free(m->label_ptrs);
	free(m->funcs);
	free(m->func_ptrs);
	free(m->locs);
	free(m->loc_ptrs);
	free(m->lines);
	free(m->line_ptrs);
}

static void builder_free(struct builder *b)
{
	for (size_t i = 0; i < b->keys.n; i++)
		free(b->accs[i].locs);
	free(b->accs);
	free(b->locs);
	intern_free(&b->strings);
	intern_free(&b->frames);
	intern_free(&b->keys);
}

int pprof_build(const struct trace_data *td, bool no_copies, uint8_t **buf,
		size_t *len)
{
	struct message m = { 0 };
	struct builder b = { 0 };
	uint32_t empty;
	int err;

	perftools__profiles__profile__init(&m.prof);
	err = intern(&b.strings, "", 0, &empty);
	if (!err)
		err = collect(&b, td, no_copies);
	if (!err)
		err = sample_types(&b, &m);
	if (!err)
		err = samples(&b, &m);
	if (!err)
		err = functions(&b, &m);
	if (!err) {
		m.prof.duration_nanos = trace_span(td);
		m.prof.n_string_table = b.strings.n;
		m.prof.string_table = b.strings.strs;
		err = pack(&m, buf, len);
	}
	message_free(&m);
	builder_free(&b);
	return err;
}
