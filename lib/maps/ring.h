/* SPDX-License-Identifier: MIT */
/*
 * Event rings on the host: the storage of RINGBUF, PERF_EVENT_ARRAY and
 * GPU_RINGBUF (1527) maps and of a context's print ring, the consumer, and
 * the producer the CPU back end uses. Layout and protocol: ring_layout.h
 * and docs/events.md.
 *
 * A host ring has one storage, in host memory, for its whole life: the CPU
 * back end writes records there, and once the ring is mapped into the GPU
 * (ring_map_gpu) the GPU writes there too, while CPU producers are refused
 * from then on (the GPU's position counters live in device memory, which
 * CPU code cannot update atomically with the GPU). The consumer reads the
 * storage directly, makes no CUDA call and never waits for a kernel. A
 * ring in GPU memory (EGPU_F_RING_DEVICE, below) is copied out instead.
 *
 * Errors: ring_new/ring_map_gpu/ring_consume return negative EGPU_E* codes
 * with a message; the producer functions return what a program expects
 * (Linux errno values, NULL).
 */
#ifndef EGPU_MAPS_RING_H
#define EGPU_MAPS_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bpf.h"
#include "core/map_types.h"
#include "egpu.h"
#include "maps/copy.h"
#include "maps/ring_layout.h"

struct event_ring;

/* Whether maps of @type are event rings (4, 27, 1527). */
/* The byte capacity of the ring of a ring map; EGPU_EINVAL if invalid. */
int ring_map_capacity(const struct map_spec *spec, uint64_t *cap);

/*
 * A ring of @cap bytes (a power of two in [RING_MIN_BYTES, RING_MAX_BYTES]),
 * @type being the map type (0: the print ring), named @name in messages.
 */
int ring_new(const char *name, uint32_t type, uint64_t cap,
	     struct event_ring **out);
/* For a ring map: ring_new() with the map's name, type and capacity. */
int ring_new_for_map(const struct map_spec *spec, struct event_ring **out);
/* NULL-safe. Unmaps the storage from the GPU if it was mapped. */
void ring_free(struct event_ring *r);

/* Largest payload one record may carry. */
uint32_t ring_max_payload(const struct event_ring *r);

/*
 * Map the storage into the current CUDA context (once) and fill @init with
 * the ring's GPU side as it starts: the device memory struct a producer on
 * the GPU uses. From then on CPU producers are refused.
 */
int ring_map_gpu(struct event_ring *r, struct dev_ring *init);
bool ring_on_gpu(const struct event_ring *r);
/*
 * The same struct with host addresses (data, ctl), for code that plays the
 * GPU's part on the host: tests of the protocol.
 */
void ring_host_view(const struct event_ring *r, struct dev_ring *view);
/*
 * The struct ring_map_gpu() filled, for code that folds it into the GPU's
 * (the splicer's trace mode); for a ring not on the GPU (an offline
 * context), as it would be at placeholder address @base with the shards
 * it has until a GPU is known.
 */
void ring_gpu_view(struct event_ring *r, uint64_t base, struct dev_ring *view);

/*
 * Rings whose records live in GPU memory: maps with EGPU_F_RING_DEVICE in
 * their flags (lib/maps/ring_dev.c, docs/events.md). Until the object first
 * uses the GPU such a ring is a host ring: the CPU back end writes there.
 * ring_map_gpu() then allocates the ring in GPU memory, split into shards
 * (one per group of SMs, each starting at position 0), and @init says so
 * (RING_IN_DEVICE_MEMORY). The consumer takes the host records left, then
 * copies records out of GPU memory, every shard's, once ring_bind_copier()
 * told it how.
 */
bool ring_in_device_memory(const struct event_ring *r);
/*
 * A lossless ring's (EGPU_F_RING_LOSSLESS) longest wait for room, before
 * it goes on the GPU (EGPU_EBUSY after; EGPU_EINVAL: not lossless).
 */
int ring_set_wait(struct event_ring *r, uint64_t wait_ns);

/*
 * Copies between the host and GPU memory on channels, one per consumer
 * thread (@chan: its reader index, below RING_READERS_MAX; 0 also for
 * calls outside a pass): channels run at once, the work of one in the
 * order it was asked for. read is complete when it returns; write and
 * zero may only be queued, and are done by the time a later read or sync
 * of their channel returns (write's @src is page-locked and left unchanged
 * until then). 0 or a negative EGPU_E* code with a message. Reads of more
 * than a word land in a mirror or the lines' copy (page-locked), smaller
 * ones anywhere: the map's copier stages those itself.
 */
struct ring_copier {
	int (*read)(void *io, uint32_t chan, void *dst, uint64_t addr,
		    size_t n);
	int (*write)(void *io, uint32_t chan, uint64_t addr, const void *src,
		     size_t n);
	int (*zero)(void *io, uint32_t chan, uint64_t addr, size_t n);
	int (*sync)(void *io, uint32_t chan);
	/*
	 * Optional: read only queued (@dst page-locked), done by the
	 * channel's next sync, so that a pass's copies of many shards wait
	 * once (ring_dev.c's rounds). Without it reads are complete on
	 * return.
	 */
	int (*read_async)(void *io, uint32_t chan, void *dst, uint64_t addr,
			  size_t n);
	/*
	 * Optional, with read_async: @n copies of one direction queued at
	 * once, in no order among themselves (a pass queues a round's
	 * windows so: one call instead of one per shard), as read_async
	 * (out), write (in) and zero do. Without it they are queued one by
	 * one.
	 */
	int (*batch)(void *io, uint32_t chan, enum mem_copy_dir dir,
		     const struct mem_copy *v, size_t n);
	void *io;
	/*
	 * Optional: memory copies may land in, for the mirror of a consumer
	 * thread beyond the first (NULL: out of memory). Without them such
	 * mirrors are cuMemAllocHost'ed in the ring's CUDA context.
	 */
	void *(*alloc)(void *io, size_t n);
	void (*free)(void *io, void *p);
};

/*
 * For a ring in GPU memory, after ring_map_gpu(): how to reach it, and the
 * device address of its struct dev_ring (@init, copied into the map). From
 * then on the consumer copies records out. No effect on other rings.
 */
void ring_bind_copier(struct event_ring *r, const struct ring_copier *c,
		      uint64_t dev_ring);
/*
 * ring_map_gpu() for a ring in GPU memory with its memory given instead of
 * allocated: @store (ring_dev_store_len() zeroed bytes, at an address @c
 * of ring_bind_copier() reaches), a @mirror of at least
 * ring_max_payload() + 8 bytes and @lines of ring_dev_lines_len() bytes,
 * 8-aligned, which stay the caller's (see struct ring_copier). For
 * tests, which play GPU memory with host memory.
 */
int ring_dev_start(struct event_ring *r, uint64_t store, uint8_t *mirror,
		   size_t mirror_len, uint64_t *lines, struct dev_ring *init);
/* Bytes of the host copy of a ring in GPU memory's shard lines. */
size_t ring_dev_lines_len(const struct event_ring *r);
/*
 * Bytes of a ring in GPU memory: its shard lines, then each shard's
 * records and tail pad. Shards: ring_dev_shards().
 */
size_t ring_dev_store_len(const struct event_ring *r);
uint32_t ring_dev_shards(const struct event_ring *r);
/*
 * Records producers of shard @i dropped, read from GPU memory now (for
 * tests that check each shard: received + dropped == emitted); 0 before
 * the ring is on the GPU.
 */
uint64_t ring_dev_shard_drops(const struct event_ring *r, uint32_t i);
/*
 * Shards for a GPU of @sms SMs, before ring_dev_start() (ring_map_gpu()
 * asks the GPU): one per SM, of capacity / the power of two nearest @sms
 * bytes (so all of them hold 0.7 to 1.4 times the capacity), as long as
 * there are fewer SMs than twice ring_shards_for(capacity); else that many,
 * each shared by SMs (%smid modulo the shards).
 */
void ring_dev_fit_shards(struct event_ring *r, uint32_t sms);

struct dev_map;
/*
 * ring_bind_copier() with the copies of @m, the ring's map in GPU memory
 * (its struct dev_ring is the map's data): lib/maps/dev_map.h.
 */
void ring_bind_map(struct event_ring *r, struct dev_map *m);

/*
 * Consumers. A ring has at most one: ring_claim() fails with EGPU_EINVAL
 * when another holds it (two would race for the same records).
 */
int ring_claim(struct event_ring *r);
void ring_release(struct event_ring *r);

/* Consumer threads a ring may be drained by at once. */
#define RING_READERS_MAX 64

/*
 * Buffers for @n threads (1 to RING_READERS_MAX) to drain the ring at once
 * (ring_consume_parts), kept until ring_free(). Only a ring in GPU memory
 * splits, by shards: part k of n takes shards k, k + n, ..., so a shard's
 * records always come on the same thread.
 */
int ring_make_readers(struct event_ring *r, uint32_t n);

/*
 * A warp's batch record handed over whole: its records [@from, @count),
 * each of @len bytes, in the batch's column-major words (word k of record
 * i at @words[k * @count + i], ring_layout.h). Returns as an
 * egpu_sample_fn does: < 0 stops the pass after these records.
 */
typedef int (*ring_take_batch_fn)(void *user, const uint64_t *words,
				  uint32_t count, uint32_t len, uint32_t from);

/*
 * Where one part of a pass delivers, on its thread: @fn(@user, record)
 * for each record, or, if set, @take_batch(@user, ...) once for the
 * records of a warp's batch (instead of gathering each into a buffer of
 * the ring's for @fn); or, if @chunk is set (then instead of both), the
 * published records of each window whole, as the ring holds them, by
 * one @chunk(@user, bytes, size); then @flush(@user) if set (a batch
 * handed over, on the same thread); @records and @bytes (payload) grow
 * by what was handed over, even by a pass that stopped.
 */
struct ring_part {
	egpu_chunk_fn chunk;
	egpu_sample_fn fn;
	void *user;
	ring_take_batch_fn take_batch;
	int (*flush)(void *user);
	uint64_t records;
	uint64_t bytes;
};

struct ring_pool;

/*
 * One pass of ring_consume() split in @n parts (at most what
 * ring_make_readers() made), part k on thread k of @pool (k = 0: the
 * calling thread; @pool NULL: every part on the calling thread, one after
 * the other). Host records come first, to part 0, then the shards', each
 * part's at once (parts beyond the shards get none). A callback or flush
 * returning < 0 stops the pass: every part stops after the record it is
 * at, and the first such value (or error: its message is this thread's)
 * is returned once all parts returned. Otherwise the records handed over,
 * at most INT32_MAX.
 */
int ring_consume_parts(struct event_ring *r, struct ring_part *parts,
		       uint32_t n, struct ring_pool *pool);

/*
 * Hand every complete record, in order, to @fn (discarded ones are skipped
 * silently; each record of a batch on its own, gathered into a buffer of
 * the ring's), then give their space back. Stops at the first record not yet
 * published (in a ring in GPU memory: of each shard, shard after shard, so
 * records of different shards interleave), or after a record for which @fn
 * returned < 0: that value is
 * returned. Otherwise returns the number of records handed to @fn, or
 * EGPU_EFORMAT when a header is impossible (a producer wrote outside its
 * record). *@bytes (if given) grows by the payload bytes handed over.
 */
int ring_consume(struct event_ring *r, egpu_sample_fn fn, void *user,
		 uint64_t *bytes);
/* Whether a published record waits at the consumer position (of a shard). */
bool ring_ready(const struct event_ring *r);
/*
 * Whether passes take spans claimed and never published (no producer of
 * the ring runs any more: egpu_ringbuf_reclaim).
 */
void ring_set_reclaim(struct event_ring *r, bool on);
/* Records producers dropped because the ring was full. */
uint64_t ring_drops(const struct event_ring *r);
/*
 * Bytes of records copied out of GPU memory so far (a ring in GPU memory:
 * once, or twice where its shard was not settled, docs/events.md "Copied
 * once"); 0 for a ring read where it lies.
 */
uint64_t ring_copied(const struct event_ring *r);

/*
 * CPU producers, for the CPU back end's helpers (same results as the GPU's:
 * see lib/device/ring.cuh). @flags: 0, BPF_RB_NO_WAKEUP or
 * BPF_RB_FORCE_WAKEUP (wakeups mean nothing here).
 */
long ring_cpu_output(struct event_ring *r, const void *data, uint64_t size,
		     uint64_t flags);
void *ring_cpu_reserve(struct event_ring *r, uint64_t size, uint64_t flags);
/* Publish (or discard) a record @data returned by ring_cpu_reserve(). */
void ring_cpu_commit(void *data, bool discard);

#endif
