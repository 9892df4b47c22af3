/* SPDX-License-Identifier: MIT */
/*
 * Perfetto's protobuf trace (perfetto_trace.proto): the packet encoder and
 * the interning of one packet sequence (perfetto_seq.c), used by the writer
 * of the timeline (perfetto.c).
 *
 * Each track (a host thread, a GPU stream) is a packet sequence of its own:
 * its first packet clears the sequence's incremental state and sets the
 * defaults (the track, and a clock of the sequence whose timestamps are
 * deltas from the packet before); names, frames and stacks are interned
 * on the sequence the first time one of its events uses them.
 */
#ifndef EGPU_TRACE_PERFETTO_H
#define EGPU_TRACE_PERFETTO_H

#include "perfetto_trace.pb-c.h"
#include "writers.h"

#define PF_SEQ_CLEARED 1u  /* SEQ_INCREMENTAL_STATE_CLEARED */
#define PF_SEQ_NEEDS 2u    /* SEQ_NEEDS_INCREMENTAL_STATE */
#define PF_CLOCK_BOOTTIME 6u
#define PF_CLOCK_SEQ 64u   /* the first clock id scoped to a sequence */

/* Strings by content -> dense ids from 1 (event names, frame names). */
struct pf_strings {
	const char **str;   /* by id - 1 */
	uint32_t *slot;     /* id, 0: empty */
	size_t n, cap, slot_cap;
};

/* The whole file's: output, interned ids, scratch for one packet. */
struct pf_writer {
	const struct trace_data *td;
	FILE *f;
	struct strbuf out;
	struct strbuf text;        /* an event name made valid UTF-8 */
	struct pf_strings names;
	uint32_t **stack_frames;   /* by stack: the name id of each frame */
	uint8_t *pack;             /* one packed packet */
	size_t pack_cap;
	uint64_t t0;               /* the clocks' value at each sequence's start */
	int err;                   /* sticky EGPU_ENOMEM */
};

/* One packet sequence: a track. */
struct pf_seq {
	struct pf_writer *w;
	uint32_t id;               /* trusted_packet_sequence_id, from 1 */
	uint64_t ts;               /* the incremental clock's value */
	uint8_t *name_sent;        /* by name id: bit 1 event name, 2 frame */
	uint8_t *stack_sent;       /* by stack index */
};

/* What a slice's begin carries besides its time. */
struct pf_begin {
	const char *name;
	uint32_t stack;            /* index into td->stacks, or TRACE_NONE */
	uint64_t flow;             /* 0: none */
	bool flow_out;             /* the call's side of the flow */
	bool fan;                  /* one call, many operations (a graph) */
	uint64_t bytes;            /* copies and sets: a "bytes" argument */
	bool has_bytes;
};

/* Intern every name and stack of @td; 0 or EGPU_ENOMEM. */
int pf_writer_init(struct pf_writer *w, const struct trace_data *td, FILE *f);
/* Flush and free; 0, or the first error (EGPU_ENOMEM, EGPU_EIO). */
int pf_writer_done(struct pf_writer *w);
/* Append @p to the trace (as Trace.packet). */
void pf_emit(struct pf_writer *w, Egpu__Perfetto__TracePacket *p);

/* Start sequence @id for track @uuid: the defaults and the clock. */
int pf_seq_start(struct pf_seq *s, struct pf_writer *w, uint32_t id,
		 uint64_t uuid);
void pf_seq_free(struct pf_seq *s);
/* Begin / end a slice on the sequence's track at @ts (not before the last). */
void pf_seq_begin(struct pf_seq *s, uint64_t ts, const struct pf_begin *b);
void pf_seq_end(struct pf_seq *s, uint64_t ts);

#endif
