/* SPDX-License-Identifier: MIT */
/*
 * Rings whose records live in GPU memory (map flag EGPU_F_RING_DEVICE):
 * GPU producers write at the speed of GPU memory, and the host drains the
 * records with the copy engine on the ring map's own non-blocking streams
 * (lib/maps/dev_map_copy.c), one per consumer thread, so draining neither
 * waits for nor delays the application's kernels, and consumer threads
 * do not wait for each other.
 *
 * The ring is split into shards (ring_layout.h): a producer uses its SM's
 * shard, so warps of different SMs reserve on different counters instead
 * of queueing on one. A consumer pass reads every shard's producer
 * position at once (one copy of their lines), then drains shard after
 * shard, window by window (a window ends where the shard's records end:
 * the next lap starts at its beginning): copy the unread bytes into a
 * page-locked mirror, find where the published records there end, copy
 * those bytes again and hand their records over, zero them in GPU memory,
 * and write the shard's consumer position back. The GPU reads that
 * position from its own memory. The zeroing and the write are only queued
 * on the thread's stream, in that order (the stream runs them so): the
 * thread's next copy out, or its wait at the end of its part of the pass,
 * finds them done. A round does this for as many shards as the mirror
 * has slots at once: all first copies queued, one wait, all second copies
 * queued, one wait; so a pass waits twice per round, not per shard.
 *
 * Why twice: a copy engine reads a range in no promised order, so one copy
 * may read a record's payload before its producer wrote it and its header
 * after the producer published it. A header that a completed copy saw
 * published was published before the next copy started, and its payload
 * before the header (the producer's fence, at GPU scope: copies read
 * through L2), so the second copy holds whole records. The price is twice
 * the bus traffic of the records consumed, and one more copy of what is
 * still unpublished. (A header is one aligned 8-byte word, which a copy
 * reads whole: it moves whole 32-byte sectors.) Unless the shard was
 * settled: its published-bytes word (counted by producers that can),
 * read in a copy before the producer position, and the uncounted bytes
 * taken add up to that position, so every record below it was written
 * but for its header before the records' copy, and it is copied once
 * (read_positions; a header the copy reads unpublished ends the walk
 * there, as always).
 *
 * Every copy out lands in page-locked memory: the mirror, the copy of the
 * shard lines, or the map's staging buffer. A copy into pageable memory
 * is staged by the driver, which may synchronize to do it (CUDA's "API
 * synchronization behavior") and so wait for the application's running
 * kernel: the consumer would stall until that kernel ends.
 */
#include <stddef.h>
#include <stdlib.h>

#include "core/core.h"
#include "cuda/cu.h"
#include "maps/dev_map.h"
#include "maps/ring_impl.h"

/*
 * A mirror this big holds a window of records of each shard a round
 * copies (ring_dev_consume); smaller rings fit whole. 4 MiB, not more:
 * eight consumer threads' rounds then stay in the host's last-level
 * cache, where the copy engine's writes land, for the walk and the
 * callbacks (SGEMM's lossless trace on an H200: 18.3x with 4 MiB, 22x
 * with 16, 21.5x with 2; docs/events.md).
 */
#define MIRROR_MAX_BYTES (4u << 20)
/* 64-bit words per line of the host copy of the shard lines. */
#define LINE_WORDS (RING_LINE / 8)

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint32_t ring_dev_shards(const struct event_ring *r)
{
	return r->shards;
}

/* Bytes of one shard's records and tail pad. */
static uint64_t shard_stride(const struct event_ring *r)
{
	return r->shard_cap + r->max_record;
}

size_t ring_dev_store_len(const struct event_ring *r)
{
	return ring_shard_lines_len(r->shards) + r->shards * shard_stride(r);
}

void ring_dev_view(const struct event_ring *r, uint64_t base,
		   struct dev_ring *v)
{
	v->reserved = v->prod = v->cons_seen = 0; /* each shard has its own */
	v->mask = r->shard_cap - 1;
	v->ctl = base;
	v->data = base + ring_shard_lines_len(r->shards);
	v->flags = RING_IN_DEVICE_MEMORY;
	v->shards = r->shards;
	v->stride = shard_stride(r);
}

size_t ring_dev_lines_len(const struct event_ring *r)
{
	return 3ull * r->shards * RING_LINE;
}

int ring_dev_setup(struct event_ring *r, uint64_t store, uint8_t *mirror,
		   size_t mirror_len, uint64_t *lines, bool owned)
{
	struct ring_dev *dev;

	if (mirror_len < r->max_record)
		return err_set(EGPU_EINVAL,
			       "ring '%s': a mirror of %zu bytes cannot hold a record of %u",
			       r->name, mirror_len, r->max_record);
	if (!lines)
		return err_set(EGPU_EINVAL, "ring '%s': no copy of its shard lines",
			       r->name);
	/* One allocation: the struct and the cursors. */
	dev = calloc(1, sizeof(*dev) + r->shards * sizeof(struct shard_cursor));
	if (!dev)
		return err_set(EGPU_ENOMEM, "ring '%s': out of memory", r->name);
	*dev = (struct ring_dev){ .store = store, .start = r->prod,
				  .cur = (struct shard_cursor *)(dev + 1),
				  .lines = lines, .mirror = mirror,
				  .mirror_len = mirror_len, .owned = owned };
	ring_dev_view(r, store, &dev->view);
	__atomic_store_n(&r->dev, dev, __ATOMIC_RELEASE);
	/* From now on CPU producers are refused (ring_on_gpu). */
	__atomic_store_n(&r->dev_mem, store, __ATOMIC_RELEASE);
	return 0;
}

void ring_dev_free(struct event_ring *r)
{
	const struct ring_copier *c = r->dev ? &r->dev->copier : NULL;

	for (uint32_t k = 1; c && k < r->readers_made; k++)
		if (r->readers[k].mirror && !r->readers[k].mirror_cuda)
			c->free(c->io, r->readers[k].mirror);
	free(r->dev);
}

/* The power of two nearest @n (by ratio), at most @max (a power of two). */
static uint32_t pow2_near(uint32_t n, uint32_t max)
{
	uint32_t p = 1;

	while (p < max && (uint64_t)p * p * 2 < (uint64_t)n * n)
		p *= 2;
	return p;
}

void ring_dev_fit_shards(struct event_ring *r, uint32_t sms)
{
	uint32_t unit;

	if (r->one_shard) /* EGPU_F_RING_ONE_SHARD: as made */
		return;
	unit = pow2_near(sms, ring_shards_for(r->cap));

	r->shard_cap = r->cap / unit;
	r->shards = sms < 2 * unit ? (sms ? sms : 1) : unit;
}

static int fit_shards_to_gpu(struct event_ring *r)
{
	const struct cu_driver *d = cu();
	CUdevice dev;
	int sms = 0;
	int err = cu_check(d->cuCtxGetDevice(&dev), "cuCtxGetDevice");

	if (!err)
		err = cu_check(d->cuDeviceGetAttribute(&sms,
				CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
			       "cuDeviceGetAttribute");
	if (!err)
		ring_dev_fit_shards(r, (uint32_t)sms);
	return err;
}

int ring_dev_alloc(struct event_ring *r)
{
	const struct cu_driver *d;
	CUdeviceptr store = 0;
	void *mirror = NULL;
	size_t len = 0, mirror_len = 0;
	int err = cu_ctx_current((CUcontext *)&r->cu_ctx);

	d = cu();
	if (!err)
		err = fit_shards_to_gpu(r);
	if (!err) {
		len = ring_dev_store_len(r);
		/* A multiple of 8 (records are), so the lines after it are. */
		mirror_len = min_u64(r->shards * shard_stride(r), MIRROR_MAX_BYTES);
		err = cu_check(d->cuMemAlloc(&store, len), "cuMemAlloc");
	}
	/* Zero: every header reads unpublished until a producer writes it. */
	if (!err)
		err = cu_zero(store, len);
	/* One page-locked allocation: the mirror, then the lines' copy. */
	if (!err)
		err = cu_check(d->cuMemAllocHost(&mirror, mirror_len +
						 ring_dev_lines_len(r)),
			       "cuMemAllocHost");
	if (!err)
		err = ring_dev_setup(r, store, mirror, mirror_len,
				     (uint64_t *)((uint8_t *)mirror + mirror_len),
				     true);
	if (err) {
		if (mirror)
			d->cuMemFreeHost(mirror);
		if (store)
			d->cuMemFree(store);
		err_prefix("ring '%s': %zu bytes of GPU memory in %u shards and a %zu-byte mirror",
			   r->name, len, r->shards,
			   mirror_len + ring_dev_lines_len(r));
	}
	return err;
}

void ring_dev_release(struct event_ring *r)
{
	const struct cu_driver *d = cu();

	for (uint32_t k = 1; k < r->readers_made; k++)
		if (r->readers[k].mirror_cuda) {
			d->cuMemFreeHost(r->readers[k].mirror);
			r->readers[k].mirror = NULL;
		}
	d->cuMemFreeHost(r->dev->mirror);
	d->cuMemFree(r->dev->store);
}

/* Page-locked memory in the ring's CUDA context, current or not. */
static int host_alloc_in_ctx(const struct event_ring *r, void **p, size_t n)
{
	const struct cu_driver *d = cu();
	CUcontext cur = NULL;
	int err = cu_check(d->cuCtxGetCurrent(&cur), "cuCtxGetCurrent");

	if (!err && cur != r->cu_ctx)
		err = cu_check(d->cuCtxSetCurrent(r->cu_ctx), "cuCtxSetCurrent");
	if (!err)
		err = cu_check(d->cuMemAllocHost(p, n), "cuMemAllocHost");
	if (cur != r->cu_ctx)
		d->cuCtxSetCurrent(cur);
	return err;
}

/*
 * Reader @k's mirror, made at its first pass: the copier's memory, or
 * page-locked memory of the ring's context.
 */
static int reader_mirror(struct event_ring *r, uint32_t k)
{
	struct ring_dev *dev = r->dev;
	struct ring_reader *rd = &r->readers[k];
	void *p = NULL;
	int err = 0;

	if (rd->mirror)
		return 0;
	if (!k) {
		rd->mirror = dev->mirror;
		return 0;
	}
	if (dev->copier.alloc) {
		p = dev->copier.alloc(dev->copier.io, dev->mirror_len);
		err = p ? 0 : err_set(EGPU_ENOMEM, "out of memory");
	} else if (dev->owned) {
		err = host_alloc_in_ctx(r, &p, dev->mirror_len);
		rd->mirror_cuda = !err;
	} else {
		err = err_set(EGPU_ENOTSUP, "no way to allocate it");
	}
	if (err) {
		err_prefix("ring '%s': a %zu-byte mirror for consumer thread %u",
			   r->name, dev->mirror_len, k + 1);
		return err;
	}
	rd->mirror = p;
	return 0;
}

static struct ring_dev *ring_dev_bound(const struct event_ring *r)
{
	struct ring_dev *dev = __atomic_load_n(&r->dev, __ATOMIC_ACQUIRE);

	return dev && __atomic_load_n(&dev->bound, __ATOMIC_ACQUIRE) ? dev : NULL;
}

void ring_bind_copier(struct event_ring *r, const struct ring_copier *c,
		      uint64_t dev_ring)
{
	struct ring_dev *dev = __atomic_load_n(&r->dev, __ATOMIC_ACQUIRE);

	if (!dev)
		return;
	dev->copier = *c;
	dev->dev_ring = dev_ring;
	__atomic_store_n(&dev->bound, true, __ATOMIC_RELEASE);
}

bool ring_dev_reading(const struct event_ring *r)
{
	const struct ring_dev *dev = ring_dev_bound(r);

	return dev && r->cons >= dev->start;
}

/* A copy out on channel @chan (a reader's index), complete on return. */
static int dev_read(const struct event_ring *r, uint32_t chan, void *dst,
		    uint64_t addr, size_t n)
{
	const struct ring_copier *c = &r->dev->copier;
	int err = c->read(c->io, chan, dst, addr, n);

	if (err)
		err_prefix("ring '%s': copying %zu bytes out of GPU memory",
			   r->name, n);
	return err;
}

uint64_t ring_copied(const struct event_ring *r)
{
	const struct ring_dev *dev = ring_dev_bound(r);

	return dev ? __atomic_load_n(&dev->copied, __ATOMIC_RELAXED) : 0;
}

/*
 * The host copy of one kind of shard line (@kind 0: counters, 1: consumer
 * positions, 2: drops), all shards' in one copy; 0 or an EGPU_E* code.
 */
static int read_lines(const struct event_ring *r, uint32_t kind)
{
	const struct ring_dev *dev = r->dev;
	uint32_t n = r->shards;

	return dev_read(r, 0, dev->lines + (size_t)kind * n * LINE_WORDS,
			dev->view.ctl + (uint64_t)kind * n * RING_LINE,
			(size_t)n * RING_LINE);
}

/* Shard @i's producer position, in the last copy of the counter lines. */
static uint64_t shard_prod(const struct ring_dev *dev, uint32_t i)
{
	const uint64_t *line = dev->lines + (size_t)i * LINE_WORDS;

	return line[offsetof(struct ring_counters, prod) / 8];
}

/* Shard @i's published-bytes word, in the last copy of the counter lines. */
static uint64_t shard_done(const struct ring_dev *dev, uint32_t i)
{
	const uint64_t *line = dev->lines + (size_t)i * LINE_WORDS;

	return line[(ring_shard_done(&dev->view, i) -
		     ring_shard_counters(&dev->view, i)) / 8];
}

static uint64_t data_addr(const struct event_ring *r, uint32_t i, uint64_t pos)
{
	return ring_shard_data(&r->dev->view, i) + (pos & r->dev->view.mask);
}

/*
 * What a part's rounds queue on its channel at once (ring_queue.c): the
 * windows' copies out, and their releases: the consumed bytes zeroed,
 * then the shards' consumer positions written (two batches, in stream
 * order), the shards and positions they release kept until both are
 * queued.
 */
struct part_queue {
	struct ring_queue out, zero, pos;
	struct released {
		uint32_t i;
		uint64_t cons;
	} *rel;
	size_t nrel, caprel;
};

static void part_queue_free(struct part_queue *q)
{
	ring_queue_free(&q->out);
	ring_queue_free(&q->zero);
	ring_queue_free(&q->pos);
	free(q->rel);
}

/*
 * Give what shard @i consumed since its last release back to producers:
 * zero it (by position, as for host rings: the tail pad holds no header),
 * then write its consumer position; queued in @q for release_flush(). The
 * position is written from its line in the host copy (page-locked), which
 * no one changes before the channel's next copy out or sync (the next
 * release of the shard comes after one).
 */
static int release_queue(struct event_ring *r, struct part_queue *q, uint32_t i)
{
	struct ring_dev *dev = r->dev;
	struct shard_cursor *cur = &dev->cur[i];
	uint64_t *cons = dev->lines + (size_t)(r->shards + i) * LINE_WORDS;
	uint64_t cap = dev->view.mask + 1, off = cur->released & dev->view.mask;
	uint64_t n = cur->cons - cur->released, first = min_u64(n, cap - off);
	int err = ring_queue_add(&q->zero, data_addr(r, i, cur->released), NULL,
				 first);

	if (!err && n > first)
		err = ring_queue_add(&q->zero, ring_shard_data(&dev->view, i), NULL,
				     n - first);
	*cons = cur->cons;
	if (!err)
		err = ring_queue_add(&q->pos, ring_shard_cons(&dev->view, i), cons,
				     sizeof(*cons));
	if (!err && !ARRAY_GROW(q->rel, q->caprel, q->nrel, 16))
		err = err_set(EGPU_ENOMEM, "ring '%s': out of memory", r->name);
	if (!err)
		q->rel[q->nrel++] = (struct released){ i, cur->cons };
	return err;
}

/*
 * The releases queued in @q, on channel @chan: the zeroes, then the
 * positions. A failed queueing leaves its shards for the next pass.
 */
static int release_flush(struct event_ring *r, uint32_t chan,
			 struct part_queue *q)
{
	const struct ring_copier *c = &r->dev->copier;
	int err = ring_queue_flush(c, chan, MEM_COPY_ZERO, &q->zero);
	uint64_t bytes = 0;

	if (!err)
		err = ring_queue_flush(c, chan, MEM_COPY_IN, &q->pos);

	for (size_t j = 0; j < q->nrel; j++) {
		struct shard_cursor *cur = &r->dev->cur[q->rel[j].i];

		bytes += q->rel[j].cons - cur->released;
		if (!err)
			cur->released = q->rel[j].cons;
	}
	if (err && q->nrel == 1)
		err_prefix("ring '%s': giving %llu bytes of shard %u back in GPU memory",
			   r->name, (unsigned long long)bytes, q->rel[0].i);
	else if (err)
		err_prefix("ring '%s': giving %llu bytes of %zu shards back in GPU memory",
			   r->name, (unsigned long long)bytes, q->nrel);
	q->pos.n = 0;
	q->nrel = 0;
	return err;
}

/*
 * One shard's part of a round: its window of records, [from, from + n)
 * copied into its slot of the mirror, and what came of it.
 */
struct window {
	uint32_t i;         /* the shard */
	uint64_t prod;      /* its producers' position */
	uint8_t *slot;      /* its place in the reader's mirror */
	struct ring_window w;
	uint64_t end;       /* where the published records end */
	struct ring_count c; /* theirs, for a chunk taker */
	int seen;           /* the first walk's end */
	bool done;          /* nothing more for it in this pass */
	bool taken;         /* a chunk given back, to be handed over */
	bool once;          /* settled: every record written before the copy,
			     * but perhaps its header ("Copied once") */
};

/* Wait for channel @chan's copies (a no-op for a copier without queued reads). */
static int dev_wait(const struct event_ring *r, uint32_t chan)
{
	const struct ring_copier *c = &r->dev->copier;
	int err = c->read_async ? c->sync(c->io, chan) : 0;

	if (err)
		err_prefix("ring '%s': waiting for copies out of GPU memory", r->name);
	return err;
}

/*
 * A copy out of records, @n bytes at @addr into @dst on channel @chan:
 * queued in @q where the copier queues reads (flushed by copy_out_flush),
 * else complete on return; counted for ring_copied.
 */
static int copy_out(const struct event_ring *r, uint32_t chan,
		    struct part_queue *q, void *dst, uint64_t addr, size_t n)
{
	const struct ring_copier *c = &r->dev->copier;
	int err = c->read_async ? ring_queue_add(&q->out, addr, dst, n) :
		  dev_read(r, chan, dst, addr, n);

	if (!err)
		__atomic_fetch_add(&r->dev->copied, n, __ATOMIC_RELAXED);
	return err;
}

/* The copies out queued in @q, at once. */
static int copy_out_flush(const struct event_ring *r, uint32_t chan,
			  struct part_queue *q)
{
	size_t n = q->out.n;
	int err = ring_queue_flush(&r->dev->copier, chan, MEM_COPY_OUT, &q->out);

	if (err)
		err_prefix("ring '%s': copying the windows of %zu shards out of GPU memory",
			   r->name, n);
	return err;
}

/* The first copy of @win's window from its shard's consumer position. */
static int window_start(struct event_ring *r, uint32_t chan,
			struct part_queue *q, size_t slot_len,
			struct window *win)
{
	struct ring_dev *dev = r->dev;
	uint64_t cap = dev->view.mask + 1, from = dev->cur[win->i].cons;
	uint64_t off = from & dev->view.mask;
	uint64_t n = min_u64(min_u64(win->prod - from, slot_len),
			     cap + r->max_record - off);

	win->w = (struct ring_window){ .base = win->slot, .from = from,
				       .starts_end = from + min_u64(cap - off, n),
				       .bytes_end = from + n };
	win->end = from;
	win->c = (struct ring_count){ 0 };
	win->taken = false;
	win->once = dev->cur[win->i].known == win->prod;
	return copy_out(r, chan, q, win->slot, data_addr(r, win->i, from), n);
}

/*
 * After the first copies: where @win's published records end, and, if
 * any, the second copy of them. Published before that copy started:
 * whole in it. A settled window (win->once: every record written, but
 * perhaps its header, before the pass read the producer positions) is
 * whole in the first, up to the first header it reads unpublished.
 */
static int window_second(struct event_ring *r, uint32_t chan,
			 struct part_queue *q, struct window *win)
{
	win->seen = ring_walk_headers(r, &win->w, &win->end, &win->c,
				      win->once);
	if (win->seen < 0)
		return win->seen;
	if (win->end == win->w.from) {
		win->done = true;
		return 0;
	}
	win->w.bytes_end = win->end;
	return win->once ? 0 :
	       copy_out(r, chan, q, win->slot, data_addr(r, win->i, win->w.from),
			win->end - win->w.from);
}

/*
 * After the second copies, for a chunk taker: @win's records, whole in
 * the mirror, consumed and their bytes given back (queued in @q, flushed
 * with the round's) before they are handed over, so that producers (a
 * lossless ring's waiting ones) get their room while the callbacks run.
 * Counted in the first walk; only warps' batches are counted again, from
 * their bodies.
 */
static int window_take(struct event_ring *r, struct part_queue *q,
		       struct window *win)
{
	uint64_t at = win->w.from;

	if (win->c.batches && !win->once) {
		int got;

		win->c = (struct ring_count){ 0 };
		got = ring_walk_headers(r, &win->w, &at, &win->c, true);
		if (got < 0)
			return got;
	}
	r->dev->cur[win->i].cons = win->end;
	win->taken = true;
	return release_queue(r, q, win->i);
}

/*
 * The bytes of records not RING_COUNTED that @win's delivery consumed,
 * up to @to: the first walk's count, or, where delivery stopped short of
 * its end, counted again.
 */
static uint64_t window_uncounted(const struct event_ring *r,
				 const struct window *win, uint64_t to)
{
	struct ring_window w = win->w;
	struct ring_count c = { 0 };
	uint64_t at = w.from;

	if (to == win->end)
		return win->c.uncounted;
	w.bytes_end = to;
	ring_walk_headers(r, &w, &at, &c, false);
	return c.uncounted;
}

/*
 * After the second copies: @win's records handed to @d (a chunk taken
 * whole, or walked), their bytes given back (queued in @q). ring_walk's
 * result, WALK_STOP, or an EGPU_E* code.
 */
static int window_deliver(struct event_ring *r, struct part_queue *q,
			  struct delivery *d, struct window *win)
{
	struct shard_cursor *cur = &r->dev->cur[win->i];
	uint64_t from = win->w.from;
	int got;

	if (win->taken)
		got = ring_hand_chunk(d, win->slot, win->end - from, &win->c) ?
		      win->seen : WALK_STOP;
	else
		got = ring_walk(r, &win->w, d, &cur->cons, &cur->sub);
	cur->uncounted += window_uncounted(r, win, cur->cons);
	if (cur->cons != cur->released) {
		int err = release_queue(r, q, win->i);

		if (err)
			return err;
	}
	/* Go on past a window's end or a record it cut short. */
	win->done = got != WALK_END && got != WALK_SHORT;
	win->done |= cur->cons == from || cur->cons >= win->prod;
	return got < 0 ? got : got == WALK_STOP ? WALK_STOP : win->seen;
}

/* Whether none of @n windows needs a second copy. */
static bool all_once(const struct window *wins, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++)
		if (!wins[j].done && !wins[j].once)
			return false;
	return true;
}

/*
 * Rounds over @n windows at once until each is done: every first copy
 * queued (one batch), one wait, every second copy queued (one batch), one
 * wait, then delivery (to a chunk taker, every window given back first,
 * in one batch of zeroes and one of positions, then each handed over, all
 * of them even after a stop: they were consumed). So a round waits twice
 * and makes a few driver calls whatever the number of shards, instead of
 * a few per shard. WALK_STOP with *@stopped the shard that stopped, or an
 * EGPU_E* code; else 0.
 */
static int rounds(struct event_ring *r, uint32_t chan, struct delivery *d,
		  struct part_queue *q, struct window *wins, uint32_t n,
		  size_t slot_len, uint32_t *stopped)
{
	bool more = true, stop = false;
	int err = 0;

	while (more && !err && !stop) {
		more = false;
		for (uint32_t j = 0; j < n && !err; j++)
			if (!wins[j].done)
				err = window_start(r, chan, q, slot_len, &wins[j]);
		if (!err)
			err = copy_out_flush(r, chan, q);
		if (!err)
			err = dev_wait(r, chan);
		for (uint32_t j = 0; j < n && !err; j++)
			if (!wins[j].done)
				err = window_second(r, chan, q, &wins[j]);
		if (!err)
			err = copy_out_flush(r, chan, q);
		if (!err && !all_once(wins, n))
			err = dev_wait(r, chan);
		for (uint32_t j = 0; j < n && !err && d->chunk &&
		     !ring_pass_stopped(d); j++)
			if (!wins[j].done)
				err = window_take(r, q, &wins[j]);
		if (!err && q->nrel)
			err = release_flush(r, chan, q);
		for (uint32_t j = 0; j < n && !err; j++) {
			int got;

			if (wins[j].done || (stop && !wins[j].taken))
				continue;
			got = window_deliver(r, q, d, &wins[j]);
			if (got == WALK_STOP && !stop) {
				*stopped = wins[j].i;
				stop = true;
			}
			err = got < 0 ? got : 0;
			more |= !wins[j].done;
		}
		if (!err && q->nrel)
			err = release_flush(r, chan, q);
	}
	return err ? err : stop ? WALK_STOP : 0;
}

/*
 * Every shard's producer position (the counter lines), and, in a copy
 * before it, what its published-bytes word and the records taken that
 * it does not count add up to (shard_cursor.known): when that equals the
 * position, every record below it was written, all but perhaps its
 * header, before that copy, so the pass copies those out once and takes
 * those whose headers read published (docs/events.md, "Copied once").
 */
static int read_positions(struct event_ring *r)
{
	struct ring_dev *dev = r->dev;
	int err = read_lines(r, 0);

	for (uint32_t i = 0; i < r->shards && !err; i++)
		dev->cur[i].known = shard_done(dev, i) + dev->cur[i].uncounted;
	return err ? err : read_lines(r, 0);
}

int ring_dev_begin(struct event_ring *r, uint32_t parts)
{
	int err = read_positions(r);

	for (uint32_t k = 0; k < parts && !err; k++)
		err = reader_mirror(r, k);
	return err;
}

bool ring_dev_idle(const struct event_ring *r)
{
	const struct ring_dev *dev = r->dev;

	for (uint32_t i = 0; i < r->shards; i++)
		if (dev->cur[i].cons != shard_prod(dev, i) ||
		    dev->cur[i].cons != dev->cur[i].released)
			return false;
	return true;
}

/*
 * The windows a round may copy at once: as many slots of the mirror as
 * hold a shard's records each (at least the largest record), for the
 * part's @mine shards.
 */
static uint32_t round_slots(const struct event_ring *r, uint32_t mine,
			    size_t *slot_len)
{
	size_t len = r->dev->mirror_len / (mine ? mine : 1) & ~(size_t)7;

	if (len > shard_stride(r))
		len = shard_stride(r);
	if (len < r->max_record)
		len = r->max_record;
	*slot_len = len;
	return (uint32_t)(r->dev->mirror_len / len);
}

/*
 * Part @k of a pass: its shards, on channel @k, as many at once as the
 * mirror has slots (rounds()). Its releases are done when it returns, so
 * the next pass may give its shards to other channels.
 */
int ring_dev_consume(struct event_ring *r, uint32_t k, uint32_t parts,
		     struct delivery *d)
{
	struct ring_dev *dev = r->dev;
	const struct ring_copier *c = &dev->copier;
	uint32_t mine = (r->shards - k + parts - 1) / parts; /* shards k + j * parts */
	uint32_t *next = &d->rd->next, per, n = 0;
	struct part_queue q = { 0 };
	struct window *wins;
	size_t slot_len;
	int err = 0, synced;

	per = round_slots(r, mine, &slot_len);
	wins = calloc(per, sizeof(*wins));
	if (!wins)
		return err_set(EGPU_ENOMEM, "ring '%s': out of memory", r->name);
	for (uint32_t i = k; i < r->shards && !err; i += parts)
		if (dev->cur[i].cons != dev->cur[i].released)
			err = release_queue(r, &q, i);
	if (!err && q.nrel)
		err = release_flush(r, k, &q);
	/* From where the last pass stopped: it may be inside a batch. */
	for (uint32_t j = 0, first = *next; j < mine && !err; j++) {
		uint32_t i = k + (first / parts + j) % mine * parts;

		if (dev->cur[i].cons != shard_prod(dev, i)) {
			wins[n] = (struct window){
				.i = i, .prod = shard_prod(dev, i),
				.slot = d->rd->mirror + (size_t)n * slot_len };
			n++;
		}
		if (!n || (n < per && j + 1 < mine))
			continue;
		err = rounds(r, k, d, &q, wins, n, slot_len, next);
		n = 0;
	}
	if (err == WALK_STOP) /* *next: the shard it stopped in */
		err = 0;
	free(wins);
	part_queue_free(&q);
	synced = c->sync(c->io, k);
	if (synced && !err) {
		err_prefix("ring '%s': giving consumed bytes back in GPU memory",
			   r->name);
		err = synced;
	}
	return err;
}

bool ring_dev_ready(const struct event_ring *r)
{
	const struct ring_dev *dev = r->dev;

	if (read_lines(r, 0))
		return false;
	for (uint32_t i = 0; i < r->shards; i++) {
		uint64_t word = 0, cons = dev->cur[i].cons;

		if (shard_prod(dev, i) == cons)
			continue;
		if (dev_read(r, 0, &word, data_addr(r, i, cons), sizeof(word)))
			return false;
		if ((word >> 32) & RING_COMMIT)
			return true;
	}
	return false;
}

uint64_t ring_dev_drops(const struct event_ring *r)
{
	struct ring_dev *dev = ring_dev_bound(r);
	uint64_t drops = 0;

	if (!dev)
		return 0;
	/* A failed copy answers the last count read. */
	if (!read_lines(r, 2)) {
		const uint64_t *line = dev->lines + (size_t)2 * r->shards * LINE_WORDS;

		for (uint32_t i = 0; i < r->shards; i++)
			drops += line[(size_t)i * LINE_WORDS];
		__atomic_store_n(&dev->drops, drops, __ATOMIC_RELAXED);
	}
	return __atomic_load_n(&dev->drops, __ATOMIC_RELAXED);
}

uint64_t ring_dev_shard_drops(const struct event_ring *r, uint32_t i)
{
	const struct ring_dev *dev = ring_dev_bound(r);

	if (!dev || i >= r->shards)
		return 0;
	ring_dev_drops(r); /* reads every shard's drop line */
	return dev->lines[(size_t)(2 * r->shards + i) * LINE_WORDS];
}

/* The ring map's streams and staging buffers (dev_map_copy.c) as the copier. */
static int map_read(void *io, uint32_t chan, void *dst, uint64_t addr,
		    size_t n)
{
	return dev_map_read(io, chan, dst, addr, n) ? EGPU_ECUDA : 0;
}

static int map_read_async(void *io, uint32_t chan, void *dst, uint64_t addr,
			  size_t n)
{
	return dev_map_read_async(io, chan, dst, addr, n) ? EGPU_ECUDA : 0;
}

static int map_write(void *io, uint32_t chan, uint64_t addr, const void *src,
		     size_t n)
{
	return dev_map_write_async(io, chan, addr, src, n) ? EGPU_ECUDA : 0;
}

static int map_zero(void *io, uint32_t chan, uint64_t addr, size_t n)
{
	return dev_map_clear_async(io, chan, addr, n) ? EGPU_ECUDA : 0;
}

static int map_batch(void *io, uint32_t chan, enum mem_copy_dir dir,
		     const struct mem_copy *v, size_t n)
{
	return dev_map_batch_async(io, chan, dir, v, n) ? EGPU_ECUDA : 0;
}

static int map_sync(void *io, uint32_t chan)
{
	return dev_map_sync(io, chan) ? EGPU_ECUDA : 0;
}

/* A channel per consumer thread. */
_Static_assert(RING_READERS_MAX <= DEV_MAP_CHANNELS, "channels per reader");

void ring_bind_map(struct event_ring *r, struct dev_map *m)
{
	const struct ring_copier c = { .read = map_read, .write = map_write,
				       .zero = map_zero, .sync = map_sync,
				       .read_async = map_read_async,
				       .batch = map_batch, .io = m };

	ring_bind_copier(r, &c, dev_map_data(m));
}
