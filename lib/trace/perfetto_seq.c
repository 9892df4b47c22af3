/* SPDX-License-Identifier: MIT */
/*
 * Perfetto packets (perfetto.h): each packed by protobuf-c and appended as
 * one Trace.packet field, so the file is a Trace message that grows packet
 * by packet. A sequence interns what its events name the first time it is
 * used there: event names; frames (one per distinct function name, itself
 * an interned string) and callstacks (frame ids, outermost first), which
 * ui.perfetto.dev shows as the slice's stack (TrackEvent.callstack_iid).
 */
#include <stdlib.h>
#include <string.h>

#include "perfetto.h"

#define OUT_CHUNK (64u << 10)
#define NAME_EVENT 1u
#define NAME_FRAME 2u

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

static int strings_grow(struct pf_strings *t)
{
	size_t cap = t->slot_cap ? t->slot_cap * 2 : 256;
	uint32_t *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return EGPU_ENOMEM;
	for (size_t id = 1; id <= t->n; id++) {
		size_t i = str_hash(t->str[id - 1]) & (cap - 1);

		while (slot[i])
			i = (i + 1) & (cap - 1);
		slot[i] = (uint32_t)id;
	}
	free(t->slot);
	t->slot = slot;
	t->slot_cap = cap;
	return 0;
}

/* The id of @s (by content), added if new; 0 when out of memory. */
static uint32_t strings_id(struct pf_strings *t, const char *s)
{
	size_t i;

	if ((t->n + 1) * 2 > t->slot_cap && strings_grow(t))
		return 0;
	i = str_hash(s) & (t->slot_cap - 1);
	for (; t->slot[i]; i = (i + 1) & (t->slot_cap - 1))
		if (!strcmp(t->str[t->slot[i] - 1], s))
			return t->slot[i];
	if (!ARRAY_GROW(t->str, t->cap, t->n, 256))
		return 0;
	t->str[t->n++] = s;
	t->slot[i] = (uint32_t)t->n;
	return (uint32_t)t->n;
}

static const char *or_unknown(const char *s)
{
	return s ? s : "?";
}

/* Name ids of every frame of every stack. */
static int intern_stacks(struct pf_writer *w)
{
	const struct trace_data *td = w->td;

	w->stack_frames = calloc(td->stack_cnt + 1, sizeof(*w->stack_frames));
	if (!w->stack_frames)
		return EGPU_ENOMEM;
	for (size_t s = 0; s < td->stack_cnt; s++) {
		const struct trace_stack *st = &td->stacks[s];

		w->stack_frames[s] = malloc((st->n + 1) * sizeof(uint32_t));
		if (!w->stack_frames[s])
			return EGPU_ENOMEM;
		for (uint32_t i = 0; i < st->n; i++)
			if (!(w->stack_frames[s][i] = strings_id(&w->names,
					or_unknown(st->frames[i]))))
				return EGPU_ENOMEM;
	}
	return 0;
}

int pf_writer_init(struct pf_writer *w, const struct trace_data *td, FILE *f)
{
	*w = (struct pf_writer){ .td = td, .f = f, .t0 = trace_first_ns(td) };
	sb_init(&w->out);
	sb_init(&w->text);
	for (size_t i = 0; i < td->api_cnt; i++)
		if (!strings_id(&w->names, or_unknown(td->apis[i].name)))
			return w->err = EGPU_ENOMEM;
	for (size_t i = 0; i < td->op_cnt; i++)
		if (!strings_id(&w->names, or_unknown(td->ops[i].name)))
			return w->err = EGPU_ENOMEM;
	return w->err = intern_stacks(w);
}

int pf_writer_done(struct pf_writer *w)
{
	int err = w->err;

	for (size_t s = 0; w->stack_frames && s < w->td->stack_cnt; s++)
		free(w->stack_frames[s]);
	free(w->stack_frames);
	free(w->names.str);
	free(w->names.slot);
	free(w->pack);
	sb_free(&w->text);
	if (err) {
		sb_free(&w->out);
		return err_set(err, "trace: out of memory writing the Perfetto "
			       "trace");
	}
	return out_done(&w->out, w->f, "Perfetto trace");
}

static void put_varint(struct strbuf *sb, uint64_t v)
{
	char b[10];
	size_t n = 0;

	do {
		b[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	sb_addn(sb, b, n);
}

void pf_emit(struct pf_writer *w, Egpu__Perfetto__TracePacket *p)
{
	size_t len = egpu__perfetto__trace_packet__get_packed_size(p);

	if (w->err)
		return;
	if (len > w->pack_cap) {
		uint8_t *b = realloc(w->pack, len);

		if (!b) {
			w->err = EGPU_ENOMEM;
			return;
		}
		w->pack = b;
		w->pack_cap = len;
	}
	egpu__perfetto__trace_packet__pack(p, w->pack);
	sb_addn(&w->out, "\x0a", 1);   /* Trace.packet: field 1, bytes */
	put_varint(&w->out, len);
	sb_addn(&w->out, (const char *)w->pack, len);
	if (w->out.len >= OUT_CHUNK)
		out_flush(&w->out, w->f);
}

static Egpu__Perfetto__TracePacket seq_packet(struct pf_seq *s, uint32_t flags)
{
	Egpu__Perfetto__TracePacket p = EGPU__PERFETTO__TRACE_PACKET__INIT;

	p.has_trusted_packet_sequence_id = true;
	p.trusted_packet_sequence_id = s->id;
	p.has_sequence_flags = true;
	p.sequence_flags = flags;
	return p;
}

int pf_seq_start(struct pf_seq *s, struct pf_writer *w, uint32_t id,
		 uint64_t uuid)
{
	Egpu__Perfetto__TracePacket p;
	Egpu__Perfetto__TracePacketDefaults defs =
		EGPU__PERFETTO__TRACE_PACKET_DEFAULTS__INIT;
	Egpu__Perfetto__TrackEventDefaults tdefs =
		EGPU__PERFETTO__TRACK_EVENT_DEFAULTS__INIT;
	Egpu__Perfetto__ClockSnapshot snap = EGPU__PERFETTO__CLOCK_SNAPSHOT__INIT;
	Egpu__Perfetto__ClockSnapshot__Clock boot =
		EGPU__PERFETTO__CLOCK_SNAPSHOT__CLOCK__INIT;
	Egpu__Perfetto__ClockSnapshot__Clock inc =
		EGPU__PERFETTO__CLOCK_SNAPSHOT__CLOCK__INIT;
	Egpu__Perfetto__ClockSnapshot__Clock *clocks[] = { &boot, &inc };

	*s = (struct pf_seq){ .w = w, .id = id, .ts = w->t0 };
	s->name_sent = calloc(w->names.n + 1, 1);
	s->stack_sent = calloc(w->td->stack_cnt + 1, 1);
	if (!s->name_sent || !s->stack_sent)
		return w->err = EGPU_ENOMEM;
	p = seq_packet(s, PF_SEQ_CLEARED);
	tdefs.has_track_uuid = true;
	tdefs.track_uuid = uuid;
	defs.has_timestamp_clock_id = true;
	defs.timestamp_clock_id = PF_CLOCK_SEQ;
	defs.track_event_defaults = &tdefs;
	p.trace_packet_defaults = &defs;
	/* the sequence's clock counts from t0 on BOOTTIME, in deltas */
	boot.has_clock_id = inc.has_clock_id = true;
	boot.clock_id = PF_CLOCK_BOOTTIME;
	inc.clock_id = PF_CLOCK_SEQ;
	boot.has_timestamp = inc.has_timestamp = true;
	boot.timestamp = inc.timestamp = w->t0;
	inc.has_is_incremental = inc.is_incremental = true;
	snap.n_clocks = ARRAY_SIZE(clocks);
	snap.clocks = clocks;
	p.data_case = EGPU__PERFETTO__TRACE_PACKET__DATA_CLOCK_SNAPSHOT;
	p.clock_snapshot = &snap;
	pf_emit(w, &p);
	return w->err;
}

void pf_seq_free(struct pf_seq *s)
{
	free(s->name_sent);
	free(s->stack_sent);
}

/* A packet of the sequence's track at @ts (a delta from the last). */
static Egpu__Perfetto__TracePacket event_packet(struct pf_seq *s, uint64_t ts)
{
	Egpu__Perfetto__TracePacket p = seq_packet(s, PF_SEQ_NEEDS);

	if (ts < s->ts)
		ts = s->ts;
	p.has_timestamp = true;
	p.timestamp = ts - s->ts;
	s->ts = ts;
	return p;
}

/* What one packet interns: at most one event name and one stack. */
struct interning {
	Egpu__Perfetto__InternedData data;
	Egpu__Perfetto__EventName name, *names[1];
	Egpu__Perfetto__Callstack stack, *stacks[1];
	uint64_t *frame_ids;
	Egpu__Perfetto__InternedString *fn, **fns;
	Egpu__Perfetto__Frame *frame, **frames;
};

static void intern_name(struct pf_seq *s, struct interning *in, uint32_t id)
{
	if (s->name_sent[id] & NAME_EVENT)
		return;
	s->name_sent[id] |= NAME_EVENT;
	in->name = (Egpu__Perfetto__EventName)EGPU__PERFETTO__EVENT_NAME__INIT;
	in->name.has_iid = true;
	in->name.iid = id;
	/* a protobuf string is UTF-8 (kernel names may not be) */
	s->w->text.len = 0;
	utf8_put(&s->w->text, s->w->names.str[id - 1]);
	in->name.name = sb_ok(&s->w->text) ? s->w->text.buf : "?";
	in->names[0] = &in->name;
	in->data.n_event_names = 1;
	in->data.event_names = in->names;
}

/* The frames of stack @st not sent yet, and the stack: 0 or ENOMEM. */
static int intern_stack(struct pf_seq *s, struct interning *in, uint32_t st)
{
	const uint32_t *ids = s->w->stack_frames[st];
	uint32_t n = s->w->td->stacks[st].n, k = 0;

	in->frame_ids = malloc(n * sizeof(*in->frame_ids) + 1);
	in->fn = malloc(n * sizeof(*in->fn) + 1);
	in->fns = malloc(n * sizeof(*in->fns) + 1);
	in->frame = malloc(n * sizeof(*in->frame) + 1);
	in->frames = malloc(n * sizeof(*in->frames) + 1);
	if (!in->frame_ids || !in->fn || !in->fns || !in->frame || !in->frames)
		return EGPU_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const char *text = s->w->names.str[ids[i] - 1];

		in->frame_ids[i] = ids[i];
		if (s->name_sent[ids[i]] & NAME_FRAME)
			continue;
		s->name_sent[ids[i]] |= NAME_FRAME;
		in->fn[k] = (Egpu__Perfetto__InternedString)
			EGPU__PERFETTO__INTERNED_STRING__INIT;
		in->fn[k].has_iid = in->fn[k].has_str = true;
		in->fn[k].iid = ids[i];
		in->fn[k].str.data = (uint8_t *)text;
		in->fn[k].str.len = strlen(text);
		in->fns[k] = &in->fn[k];
		/* one frame per function name, with the same id */
		in->frame[k] = (Egpu__Perfetto__Frame)EGPU__PERFETTO__FRAME__INIT;
		in->frame[k].has_iid = in->frame[k].has_function_name_id = true;
		in->frame[k].iid = in->frame[k].function_name_id = ids[i];
		in->frames[k] = &in->frame[k];
		k++;
	}
	in->data.n_function_names = in->data.n_frames = k;
	in->data.function_names = in->fns;
	in->data.frames = in->frames;
	in->stack = (Egpu__Perfetto__Callstack)EGPU__PERFETTO__CALLSTACK__INIT;
	in->stack.has_iid = true;
	in->stack.iid = (uint64_t)st + 1;
	in->stack.n_frame_ids = n;
	in->stack.frame_ids = in->frame_ids;
	in->stacks[0] = &in->stack;
	in->data.n_callstacks = 1;
	in->data.callstacks = in->stacks;
	s->stack_sent[st] = 1;
	return 0;
}

static void interning_free(struct interning *in)
{
	free(in->frame_ids);
	free(in->fn);
	free(in->fns);
	free(in->frame);
	free(in->frames);
}

/* The flow of @b on @e: star-shaped for a graph (legacy bind ids, whose
 * FLOW_IN does not close the flow), else one arrow. */
static void put_flow(Egpu__Perfetto__TrackEvent *e,
		     Egpu__Perfetto__TrackEvent__LegacyEvent *legacy,
		     const struct pf_begin *b, uint64_t *flow)
{
	*flow = b->flow;
	if (!b->flow)
		return;
	if (b->fan) {
		legacy->has_bind_id = legacy->has_flow_direction = true;
		legacy->bind_id = b->flow;
		legacy->flow_direction = b->flow_out ?
			EGPU__PERFETTO__TRACK_EVENT__LEGACY_EVENT__FLOW_DIRECTION__FLOW_OUT :
			EGPU__PERFETTO__TRACK_EVENT__LEGACY_EVENT__FLOW_DIRECTION__FLOW_IN;
		e->legacy_event = legacy;
	} else if (b->flow_out) {
		e->n_flow_ids_old = 1;
		e->flow_ids_old = flow;
	} else {
		e->n_terminating_flow_ids_old = 1;
		e->terminating_flow_ids_old = flow;
	}
}

void pf_seq_begin(struct pf_seq *s, uint64_t ts, const struct pf_begin *b)
{
	Egpu__Perfetto__TracePacket p = event_packet(s, ts);
	Egpu__Perfetto__TrackEvent e = EGPU__PERFETTO__TRACK_EVENT__INIT;
	Egpu__Perfetto__TrackEvent__LegacyEvent legacy =
		EGPU__PERFETTO__TRACK_EVENT__LEGACY_EVENT__INIT;
	Egpu__Perfetto__DebugAnnotation bytes =
		EGPU__PERFETTO__DEBUG_ANNOTATION__INIT, *args[] = { &bytes };
	struct interning in = { .data = EGPU__PERFETTO__INTERNED_DATA__INIT };
	uint32_t name = strings_id(&s->w->names, or_unknown(b->name));
	uint64_t flow;

	if (!name) {
		s->w->err = EGPU_ENOMEM;
		return;
	}
	e.has_type = e.has_name_iid = true;
	e.type = EGPU__PERFETTO__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
	e.name_iid = name;
	intern_name(s, &in, name);
	if (b->stack != TRACE_NONE && b->stack < s->w->td->stack_cnt) {
		if (!s->stack_sent[b->stack] && intern_stack(s, &in, b->stack))
			s->w->err = EGPU_ENOMEM;
		e.has_callstack_iid = true;
		e.callstack_iid = (uint64_t)b->stack + 1;
	}
	put_flow(&e, &legacy, b, &flow);
	if (b->has_bytes) {
		bytes.name = "bytes";
		bytes.has_uint_value = true;
		bytes.uint_value = b->bytes;
		e.n_debug_annotations = 1;
		e.debug_annotations = args;
	}
	if (in.data.n_event_names || in.data.n_callstacks)
		p.interned_data = &in.data;
	p.data_case = EGPU__PERFETTO__TRACE_PACKET__DATA_TRACK_EVENT;
	p.track_event = &e;
	pf_emit(s->w, &p);
	interning_free(&in);
}

void pf_seq_end(struct pf_seq *s, uint64_t ts)
{
	Egpu__Perfetto__TracePacket p = event_packet(s, ts);
	Egpu__Perfetto__TrackEvent e = EGPU__PERFETTO__TRACK_EVENT__INIT;

	e.has_type = true;
	e.type = EGPU__PERFETTO__TRACK_EVENT__TYPE__TYPE_SLICE_END;
	p.data_case = EGPU__PERFETTO__TRACE_PACKET__DATA_TRACK_EVENT;
	p.track_event = &e;
	pf_emit(s->w, &p);
}
