/* SPDX-License-Identifier: MIT */
/*
 * Perfetto packets (perfetto.h): each packed by protobuf-c and appended as
 * one Trace.packet field, so the file is a Trace message that grows packet
 * by packet. A sequence interns what its events name the first time it is
 * used there: event names; frames (one per distinct function name, itself
 * an interned string) and callstacks (frame ids, outermost first), which
 * ui.perfetto.dev shows as the slice's stack (TrackEvent.callstack_iid).
 * Event names and frame names are numbered apart (Perfetto's interning
 * tables are separate), so the few event names keep one-byte ids.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto.h"

#define OUT_CHUNK (64u << 10)

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

/* Set @id in @b: 1 if it was set, 0 if not, -1 when out of memory. */
static int bits_set(struct pf_bits *b, size_t id)
{
	size_t byte = id / 8;

	if (byte >= b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		uint8_t *nb;

		while (cap <= byte)
			cap *= 2;
		if (!(nb = realloc(b->b, cap)))
			return -1;
		memset(nb + b->cap, 0, cap - b->cap);
		b->b = nb;
		b->cap = cap;
	}
	if (b->b[byte] & (1u << (id % 8)))
		return 1;
	b->b[byte] |= (uint8_t)(1u << (id % 8));
	return 0;
}

/* The frame ids of stack @st of the part being written (named once for
 * the whole stream); NULL when out of memory. */
static const uint32_t *stack_ids(struct pf_writer *w, uint32_t st)
{
	const struct trace_stack *ts;

	while (w->stacks_named <= st) {
		uint32_t **ids;

		if (!ARRAY_GROW(w->stack_frames, w->stacks_cap, w->stacks_named,
				256))
			return NULL;
		ts = &w->td->stacks[w->stacks_named];
		ids = &w->stack_frames[w->stacks_named];
		if (!(*ids = malloc((ts->n + 1) * sizeof(uint32_t))))
			return NULL;
		w->stacks_named++;
		for (uint32_t i = 0; i < ts->n; i++)
			if (!((*ids)[i] = strings_id(&w->frames,
						     or_unknown(ts->frames[i]))))
				return NULL;
	}
	return w->stack_frames[st];
}

void pf_writer_init(struct pf_writer *w, FILE *f)
{
	*w = (struct pf_writer){ .f = f };
	sb_init(&w->out);
	sb_init(&w->text);
}

static void strings_free(struct pf_strings *t)
{
	free(t->str);
	free(t->slot);
}

void pf_writer_free(struct pf_writer *w)
{
	for (size_t s = 0; s < w->stacks_named; s++)
		free(w->stack_frames[s]);
	free(w->stack_frames);
	strings_free(&w->events);
	strings_free(&w->frames);
	free(w->pack);
	sb_free(&w->text);
	sb_free(&w->out);
}

int pf_flush(struct pf_writer *w)
{
	if (!sb_ok(&w->out) && !w->err)
		w->err = EGPU_ENOMEM;
	if (w->err)
		return w->err;
	if (w->out.len && fwrite(w->out.buf, 1, w->out.len, w->f) != w->out.len)
		w->err = err_set(EGPU_EIO, "trace: writing the Perfetto trace: "
				 "%s", strerror(errno));
	w->written += w->out.len;
	w->out.len = 0;
	return w->err;
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
		pf_flush(w);
}

/* A packet of sequence @s. Only its first packet in a file has flags
 * (it clears the incremental state): the others leave out
 * SEQ_NEEDS_INCREMENTAL_STATE, 2 bytes a packet, 8 a launch. A reader
 * uses that flag only to skip packets of a sequence whose state was lost
 * (a writer's buffer overrun); in these files every sequence sets its
 * state up first and no packet is lost. */
static Egpu__Perfetto__TracePacket seq_packet(struct pf_seq *s)
{
	Egpu__Perfetto__TracePacket p = EGPU__PERFETTO__TRACE_PACKET__INIT;

	p.has_trusted_packet_sequence_id = true;
	p.trusted_packet_sequence_id = s->id;
	return p;
}

int pf_seq_start(struct pf_seq *s, struct pf_writer *w, uint32_t id,
		 uint64_t uuid, uint64_t t0)
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

	pf_seq_free(s);
	*s = (struct pf_seq){ .w = w, .id = id, .ts = t0 };
	p = seq_packet(s);
	p.has_sequence_flags = true;
	p.sequence_flags = PF_SEQ_CLEARED;
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
	boot.timestamp = inc.timestamp = t0;
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
	free(s->events.b);
	free(s->frames.b);
	free(s->stacks.b);
	s->events = s->frames = s->stacks = (struct pf_bits){ 0 };
}

/* A packet of the sequence's track at @ts (a delta from the last). */
static Egpu__Perfetto__TracePacket event_packet(struct pf_seq *s, uint64_t ts)
{
	Egpu__Perfetto__TracePacket p = seq_packet(s);

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

/* Event name @id, unless the sequence has it: 0 or ENOMEM. */
static int intern_name(struct pf_seq *s, struct interning *in, uint32_t id)
{
	int had = bits_set(&s->events, id);

	if (had)
		return had < 0 ? EGPU_ENOMEM : 0;
	in->name = (Egpu__Perfetto__EventName)EGPU__PERFETTO__EVENT_NAME__INIT;
	in->name.has_iid = true;
	in->name.iid = id;
	/* a protobuf string is UTF-8 (kernel names may not be) */
	s->w->text.len = 0;
	utf8_put(&s->w->text, s->w->events.str[id - 1]);
	in->name.name = sb_ok(&s->w->text) ? s->w->text.buf : "?";
	in->names[0] = &in->name;
	in->data.n_event_names = 1;
	in->data.event_names = in->names;
	return 0;
}

/* The frames of stack @st not sent yet, and the stack: 0 or ENOMEM. */
static int intern_stack(struct pf_seq *s, struct interning *in, uint32_t st)
{
	const uint32_t *ids = stack_ids(s->w, st);
	uint32_t n = s->w->td->stacks[st].n, k = 0;
	int had, err = 0;

	in->frame_ids = malloc(n * sizeof(*in->frame_ids) + 1);
	in->fn = malloc(n * sizeof(*in->fn) + 1);
	in->fns = malloc(n * sizeof(*in->fns) + 1);
	in->frame = malloc(n * sizeof(*in->frame) + 1);
	in->frames = malloc(n * sizeof(*in->frames) + 1);
	if (!ids || !in->frame_ids || !in->fn || !in->fns || !in->frame ||
	    !in->frames)
		return EGPU_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const char *text = s->w->frames.str[ids[i] - 1];

		in->frame_ids[i] = ids[i];
		if ((had = bits_set(&s->frames, ids[i]))) {
			err |= had < 0;
			continue;
		}
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
	return err ? EGPU_ENOMEM : 0;
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
	uint32_t name = strings_id(&s->w->events, or_unknown(b->name));
	uint64_t flow;
	int had;

	if (!name || intern_name(s, &in, name)) {
		s->w->err = EGPU_ENOMEM;
		return;
	}
	e.has_type = e.has_name_iid = true;
	e.type = EGPU__PERFETTO__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
	e.name_iid = name;
	if (b->stack != TRACE_NONE && b->stack < s->w->td->stack_cnt) {
		had = bits_set(&s->stacks, b->stack);
		if (had < 0 || (!had && intern_stack(s, &in, b->stack)))
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
