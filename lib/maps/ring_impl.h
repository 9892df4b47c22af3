/* SPDX-License-Identifier: MIT */
/*
 * struct event_ring and the record walk, shared by ring.c, ring_consume.c,
 * ring_cpu.c, ring_dev.c and ring_walk.c only.
 */
#ifndef EGPU_MAPS_RING_IMPL_H
#define EGPU_MAPS_RING_IMPL_H

#include <pthread.h>

#include "maps/ring.h"

/* A shard's consumer (ring_dev.c): handed over, and given back, up to here. */
struct shard_cursor {
	uint64_t cons;
	uint64_t released; /* zeroed there and told to producers */
	uint32_t sub;      /* records of the batch at cons handed over */
	uint64_t uncounted; /* bytes before cons not RING_COUNTED */
	/* Its published-bytes word plus uncounted, when the pass began:
	 * bytes published before the pass read the producer positions. */
	uint64_t known;
};

/*
 * What one consumer thread works with (ring_make_readers): reader k drains
 * shards k, k + n, k + 2n... of a ring in GPU memory, n being the pass's
 * parts; reader 0 also takes the host records.
 */
struct ring_reader {
	uint8_t *unpacked;   /* one record of a batch, made contiguous */
	uint8_t *mirror;     /* its window of records copied out (reader 0:
			      * the ring's mirror; others: made at their first
			      * pass, page-locked) */
	bool mirror_cuda;    /* made with cuMemAllocHost, not the copier */
	uint32_t next;       /* the shard its next pass starts with: the last
			      * one it stopped in */
};

/*
 * A ring whose records live in GPU memory (ring_dev.c), in r->shards
 * shards laid out as @view (the struct dev_ring GPU producers got) says,
 * at @store. The consumer reads GPU memory once it has taken the host
 * records below @start (written by the CPU back end).
 */
struct ring_dev {
	uint64_t store;      /* device address of the layout */
	uint64_t start;      /* where the CPU producers' records end */
	struct dev_ring view;
	struct shard_cursor *cur; /* one per shard */
	uint64_t *lines;     /* host copy of the shard lines, page-locked */
	uint8_t *mirror;     /* page-locked: reader 0's window of records */
	size_t mirror_len;   /* at least max_record; every reader's */
	bool owned;          /* store and mirror were allocated here */
	/* Set once the ring's map exists (ring_bind_copier). */
	struct ring_copier copier;
	uint64_t dev_ring;   /* device address of the struct dev_ring */
	bool bound;          /* copier and dev_ring set: the consumer may copy */
	uint64_t drops;      /* the last drop count read from GPU memory */
	uint64_t copied;     /* bytes of records copied out (ring_copied) */
};

struct event_ring {
	/* First, as in struct host_map: a helper given the wrong kind of
	 * map by a program reads a type it refuses instead of misreading
	 * the other struct. */
	uint32_t type;
	uint32_t max_record; /* header + payload, at most */
	uint64_t cap;        /* bytes of records, a power of two */
	char *name;
	void *mem;           /* control page, records, tail pad */
	size_t mem_len;
	struct ring_ctl *ctl;
	uint8_t *data;
	/* Consumer. */
	bool claimed;
	uint64_t cons;       /* records before this position were handed over */
	uint32_t cons_sub;   /* ... and this many of the batch at cons */
	struct ring_reader *readers; /* one per consumer thread */
	/* No producer runs: spans claimed and never published are taken
	 * (egpu_ringbuf_reclaim; lib/maps/span_layout.h). */
	bool reclaim;
	uint32_t readers_made;
	/* CPU producers, until the ring is mapped into the GPU. */
	pthread_mutex_t lock;
	uint64_t prod;
	/* GPU. */
	bool in_device_memory; /* the map asked for EGPU_F_RING_DEVICE */
	uint32_t shards;     /* ... in this many shards */
	uint64_t shard_cap;  /* of this many bytes each, a power of two */
	bool one_shard;      /* EGPU_F_RING_ONE_SHARD: never split */
	uint64_t wait_ns;    /* EGPU_F_RING_LOSSLESS: producers' longest wait, else 0 */
	void *cu_ctx;        /* CUcontext of the registration or allocation */
	uint64_t dev_mem;    /* device address of mem (or of the GPU memory
			      * copy of its layout), 0 before the GPU */
	struct ring_dev *dev; /* records in GPU memory: ring_dev.c */
};

/* What a consumer pass delivers to, and how far it got. */
struct delivery {
	egpu_chunk_fn chunk; /* or NULL: records one by one (fn, take_batch) */
	egpu_sample_fn fn;
	ring_take_batch_fn take_batch; /* or NULL: fn for each of a batch's */
	void *user;
	uint64_t *bytes;
	struct ring_reader *rd; /* the thread's buffers */
	int *stop; /* set when fn said stop: the pass's other parts stop too */
	int n;   /* records handed to fn */
	int ret; /* fn's last result */
};

/*
 * Bytes of a ring as one piece of memory: @base holds the byte of
 * position @from. Records starting at @starts_end or later lie elsewhere
 * (past the end of the records: the next lap starts at the beginning), and
 * no byte at or after @bytes_end is here.
 */
struct ring_window {
	const uint8_t *base;
	uint64_t from;
	uint64_t starts_end;
	uint64_t bytes_end;
};

/* Why ring_walk() ended. */
enum walk_end {
	WALK_END,    /* at starts_end: go on with the next window */
	WALK_WAIT,   /* at a record not published yet */
	WALK_SHORT,  /* at a record not all in the window */
	WALK_STOP,   /* the callback said stop, or the count is full */
};

/* ring_walk.c. The header at @rec, read with acquire. */
struct ring_hdr ring_hdr_load(const uint8_t *rec);
/*
 * Hand the published records of @w from *@pos on to @d, advancing *@pos
 * past each one handed over whole (*@sub: records of the batch at *@pos
 * already handed over); to a chunk taker (@d->chunk), all of them in one
 * call. Returns an enum walk_end, or EGPU_EFORMAT for an impossible
 * header.
 */
int ring_walk(const struct event_ring *r, const struct ring_window *w,
	      struct delivery *d, uint64_t *pos, uint32_t *sub);

/* Whether another part of @d's pass was told to stop. */
bool ring_pass_stopped(const struct delivery *d);

/*
 * Records (discards none), their payload bytes, warps' batches, and the
 * ring bytes of records (discards too) not RING_COUNTED.
 */
struct ring_count {
	uint64_t records;
	uint64_t bytes;
	uint64_t batches;
	uint64_t uncounted;
};
/*
 * Only find where the published records of @w from *@pos on end,
 * advancing *@pos there, counted into *@c if given. Without @bodies
 * nothing but their headers is read (in a first copy of a ring in GPU
 * memory a published header may come with a body read before it landed,
 * ring_dev.c; a batch's count included), so a batch counts as one record
 * of its length. ring_walk()'s results.
 */
int ring_walk_headers(const struct event_ring *r, const struct ring_window *w,
		      uint64_t *pos, struct ring_count *c, bool bodies);
/*
 * Hand @size bytes of whole records at @data, counted as @c says, to
 * @d->chunk: whether the pass goes on.
 */
bool ring_hand_chunk(struct delivery *d, const uint8_t *data, uint64_t size,
		     const struct ring_count *c);

/*
 * ring_dev.c. With r->lock held: allocate the GPU memory, mirror and copy
 * of the shard lines of a ring that asked for it (in the current CUDA
 * context), or take @store, @mirror and @lines given (@owned false:
 * tests), and start the GPU's records at the CPU producers' position.
 */
int ring_dev_alloc(struct event_ring *r);
int ring_dev_setup(struct event_ring *r, uint64_t store, uint8_t *mirror,
		   size_t mirror_len, uint64_t *lines, bool owned);
/* Free what ring_dev_alloc() allocated; its CUDA context is current. */
void ring_dev_release(struct event_ring *r);
/* Free r->dev (NULL-safe) and the mirrors the copier made. */
void ring_dev_free(struct event_ring *r);
/* The shard geometry of @v, a ring in GPU memory at @base. */
void ring_dev_view(const struct event_ring *r, uint64_t base,
		   struct dev_ring *v);
/* Whether the consumer now reads GPU memory (host records all taken). */
bool ring_dev_reading(const struct event_ring *r);
/*
 * A pass over the shards, in GPU memory: ring_dev_begin() on one thread
 * (gives back what the last pass consumed, reads the producer positions,
 * makes the mirrors of readers [0, @parts)), then ring_dev_consume() of
 * each part k (shards k, k + @parts, ...), on any threads at once.
 */
int ring_dev_begin(struct event_ring *r, uint32_t parts);
int ring_dev_consume(struct event_ring *r, uint32_t k, uint32_t parts,
		     struct delivery *d);
/* After ring_dev_begin(): whether no part has anything to consume or give
 * back (so a pass need not wake its threads). */
bool ring_dev_idle(const struct event_ring *r);
/* ring_ready() and the GPU's part of ring_drops() there. */
bool ring_dev_ready(const struct event_ring *r);
uint64_t ring_dev_drops(const struct event_ring *r);

/* A consumer round's copies of one direction (ring_queue.c). */
struct ring_queue {
	struct mem_copy *v;
	size_t n, cap;
};

int ring_queue_add(struct ring_queue *q, uint64_t addr, void *host, size_t n);
/* Queue @q's copies on channel @chan, at once where @c batches (as its
 * read_async, write or zero for @dir); @q is empty after. */
int ring_queue_flush(const struct ring_copier *c, uint32_t chan,
		     enum mem_copy_dir dir, struct ring_queue *q);
void ring_queue_free(struct ring_queue *q);

#endif
