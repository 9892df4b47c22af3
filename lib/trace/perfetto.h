/* SPDX-License-Identifier: MIT */
/*
 * Perfetto's protobuf trace (perfetto_trace.proto): the packet encoder and
 * the interning of one packet sequence (perfetto_seq.c), used by the writer
 * of the timeline (perfetto.c), which a trace streams to while it runs or
 * writes whole.
 *
 * Each track (a host thread, a GPU stream) is a packet sequence of its own:
 * its first packet in a file clears the sequence's incremental state and
 * sets the defaults (the track, and a clock of the sequence whose
 * timestamps are deltas from the packet before); event names, frames and
 * stacks are interned on the sequence the first time one of its events
 * uses them in that file.
 */
#ifndef EGPU_TRACE_PERFETTO_H
#define EGPU_TRACE_PERFETTO_H

#include "perfetto_trace.pb-c.h"
#include "writers.h"

#define PF_SEQ_CLEARED 1u  /* SEQ_INCREMENTAL_STATE_CLEARED */
#define PF_CLOCK_BOOTTIME 6u
#define PF_CLOCK_SEQ 64u   /* the first clock id scoped to a sequence */

/* Strings by content -> dense ids from 1 (event names, frame names). */
struct pf_strings {
	const char **str;   /* by id - 1 */
	uint32_t *slot;     /* id, 0: empty */
	size_t n, cap, slot_cap;
};

/* A growable set of ids (what a sequence has interned). */
struct pf_bits {
	uint8_t *b;
	size_t cap;
};

/* The output and what is interned across files: ids stay, sequences
 * intern them again in each file. */
struct pf_writer {
	const struct trace_data *td; /* the part being written; its stacks
					grow from part to part */
	FILE *f;
	struct strbuf out;
	struct strbuf text;        /* a name made valid UTF-8 */
	struct pf_strings events;  /* event names (calls, operations) */
	struct pf_strings frames;  /* frame names */
	uint32_t **stack_frames;   /* by stack: the frame id of each frame */
	size_t stacks_named, stacks_cap;
	uint8_t *pack;             /* one packed packet */
	size_t pack_cap;
	uint64_t written;          /* bytes of the current file flushed */
	int err;                   /* sticky EGPU_ENOMEM / EGPU_EIO */
};

/* One packet sequence: a track. */
struct pf_seq {
	struct pf_writer *w;
	uint32_t id;               /* trusted_packet_sequence_id, from 1 */
	uint64_t ts;               /* the incremental clock's value */
	struct pf_bits events, frames, stacks;  /* interned in this file */
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

void pf_writer_init(struct pf_writer *w, FILE *f);
/* Free what the writer holds (not its file). */
void pf_writer_free(struct pf_writer *w);
/* Append @p to the trace (as Trace.packet). */
void pf_emit(struct pf_writer *w, Egpu__Perfetto__TracePacket *p);
/* Write out what is buffered; the writer's error, if any. */
int pf_flush(struct pf_writer *w);

/* The flow ids of a stream (perfetto_flow.c): those open, those free. */
struct pf_open {
	uint64_t close, id;
};

struct pf_flows {
	struct pf_open *open;      /* a heap by close */
	size_t open_n, open_cap;
	uint64_t *free_ids;
	size_t free_n, free_cap;
	uint64_t next;             /* the highest id given */
	uint64_t graph_next;       /* legacy bind ids of graph launches */
};

/*
 * By call of @td, the id of its flow, 0 for none (no operation joined,
 * or a call that began before @from); the flows of @f still open carry
 * over. NULL when out of memory.
 */
uint64_t *pf_flow_ids(struct pf_flows *f, const struct trace_data *td,
		      uint64_t from);
void pf_flows_free(struct pf_flows *f);

/* Start sequence @id for track @uuid in the current file, its clock at
 * @t0: the defaults and the clock. */
int pf_seq_start(struct pf_seq *s, struct pf_writer *w, uint32_t id,
		 uint64_t uuid, uint64_t t0);
void pf_seq_free(struct pf_seq *s);
/* Begin / end a slice on the sequence's track at @ts (not before the last). */
void pf_seq_begin(struct pf_seq *s, uint64_t ts, const struct pf_begin *b);
void pf_seq_end(struct pf_seq *s, uint64_t ts);

/*
 * The timeline of a trace, written part by part (perfetto.c): to a FILE
 * whole, or streamed to a path while the trace runs, stopped or rotated
 * at a size.
 */
struct pf_stream;

struct pf_stream_opts {
	uint64_t max_size;   /* bytes per file; 0: no limit */
	uint32_t max_files;  /* with max_size: files kept, rotated (PATH,
				then STEM.1.EXT the newest old one, ...);
				0 or 1: the file stops at max_size */
};

/* To @path (created or truncated); NULL with an error set. */
struct pf_stream *pf_stream_open(const char *path,
				 const struct pf_stream_opts *opts);
/* To @f, no limit; NULL when out of memory. */
struct pf_stream *pf_stream_file(FILE *f);
/*
 * Write the calls and operations of @td (joined; its stacks index the
 * ones earlier parts named), each track after what it wrote before.
 * Calls that began before @flow_from get no flow (an earlier part may
 * still hold their ids). 0 or an error.
 */
int pf_stream_put(struct pf_stream *s, const struct trace_data *td,
		  uint64_t flow_from);
/* Whether the stream stopped at its size (the rest was not written). */
bool pf_stream_full(const struct pf_stream *s);
/* Flush, close what it opened and free; 0 or the first error. NULL-safe. */
int pf_stream_close(struct pf_stream *s);

#endif
