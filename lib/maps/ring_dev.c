/* SPDX-License-Identifier: MIT */
/*
 * Rings whose records live in GPU memory (map flag EGPU_F_RING_DEVICE):
 * GPU producers write at the speed of GPU memory, and the host drains the
 * records with the copy engine on the ring map's own non-blocking stream
 * (lib/maps/dev_map.c), so draining neither waits for nor delays the
 * application's kernels.
 *
 * A consumer pass reads the producers' position, then goes window by
 * window (a window ends where the records end: the next lap starts at the
 * beginning): copy the unread bytes into a page-locked mirror, find where
 * the published records there end, copy those bytes again and hand their
 * records over, zero them in GPU memory, and write the consumer position
 * back. The GPU reads that position from its own memory.
 *
 * Why twice: a copy engine reads a range in no promised order, so one copy
 * may read a record's payload before its producer wrote it and its header
 * after the producer published it. A header that a completed copy saw
 * published was published before the next copy started, and its payload
 * before the header (the producer's fence, at GPU scope: copies read
 * through L2), so the second copy holds whole records. The price is twice
 * the bus traffic of the records consumed, and one more copy of what is
 * still unpublished. (A header is one aligned 8-byte word, which a copy
 * reads whole: it moves whole 32-byte sectors.)
 */
#include <stddef.h>
#include <stdlib.h>

#include "core/core.h"
#include "cuda/cu.h"
#include "maps/dev_map.h"
#include "maps/ring_impl.h"

/* A mirror this big holds a window of records; smaller rings fit whole. */
#define MIRROR_MAX_BYTES (16u << 20)

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Bytes of the layout in GPU memory: control page, records, tail pad. */
static size_t store_len(const struct event_ring *r)
{
	return RING_DATA_OFFSET + r->cap + r->max_record;
}

int ring_dev_setup(struct event_ring *r, uint64_t store, uint8_t *mirror,
		   size_t mirror_len, bool owned)
{
	struct ring_dev *dev;

	if (mirror_len < r->max_record)
		return err_set(EGPU_EINVAL,
			       "ring '%s': a mirror of %zu bytes cannot hold a record of %u",
			       r->name, mirror_len, r->max_record);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return err_set(EGPU_ENOMEM, "ring '%s': out of memory", r->name);
	*dev = (struct ring_dev){ .store = store, .start = r->prod,
				  .released = r->prod, .mirror = mirror,
				  .mirror_len = mirror_len, .owned = owned };
	__atomic_store_n(&r->dev, dev, __ATOMIC_RELEASE);
	/* From now on CPU producers are refused (ring_on_gpu). */
	__atomic_store_n(&r->dev_mem, store, __ATOMIC_RELEASE);
	return 0;
}

int ring_dev_alloc(struct event_ring *r)
{
	size_t len = store_len(r);
	size_t mirror_len = min_u64(len - RING_DATA_OFFSET, MIRROR_MAX_BYTES);
	const struct cu_driver *d;
	CUdeviceptr store = 0;
	void *mirror = NULL;
	int err = cu_ctx_current((CUcontext *)&r->cu_ctx);

	d = cu();
	if (!err)
		err = cu_check(d->cuMemAlloc(&store, len), "cuMemAlloc");
	/* Zero: every header reads unpublished until a producer writes it. */
	if (!err)
		err = cu_check(d->cuMemsetD8(store, 0, len), "cuMemsetD8");
	if (!err)
		err = cu_check(d->cuMemAllocHost(&mirror, mirror_len),
			       "cuMemAllocHost");
	if (!err)
		err = ring_dev_setup(r, store, mirror, mirror_len, true);
	if (err) {
		if (mirror)
			d->cuMemFreeHost(mirror);
		if (store)
			d->cuMemFree(store);
		err_prefix("ring '%s': %zu bytes of GPU memory and a %zu-byte mirror",
			   r->name, len, mirror_len);
	}
	return err;
}

void ring_dev_release(struct event_ring *r)
{
	const struct cu_driver *d = cu();

	d->cuMemFreeHost(r->dev->mirror);
	d->cuMemFree(r->dev->store);
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

static int dev_read(const struct event_ring *r, void *dst, uint64_t addr,
		    size_t n)
{
	const struct ring_copier *c = &r->dev->copier;
	int err = c->read(c->io, dst, addr, n);

	if (err)
		err_prefix("ring '%s': copying %zu bytes out of GPU memory",
			   r->name, n);
	return err;
}

static uint64_t data_addr(const struct event_ring *r, uint64_t pos)
{
	return r->dev->store + RING_DATA_OFFSET + (pos & (r->cap - 1));
}

/*
 * Give what was consumed since the last release back to producers: zero
 * it (by position, as for host rings: the tail pad holds no header), then
 * write the consumer position. A failed copy leaves it for the next pass.
 */
static int dev_release(struct event_ring *r)
{
	struct ring_dev *dev = r->dev;
	const struct ring_copier *c = &dev->copier;
	uint64_t off = dev->released & (r->cap - 1), n = r->cons - dev->released;
	uint64_t first = min_u64(n, r->cap - off);
	int err = c->zero(c->io, data_addr(r, dev->released), first);

	if (!err && n > first)
		err = c->zero(c->io, dev->store + RING_DATA_OFFSET, n - first);
	if (!err)
		err = c->write(c->io, dev->store + offsetof(struct ring_ctl, cons),
			       &r->cons, sizeof(r->cons));
	if (err) {
		err_prefix("ring '%s': giving %llu bytes back in GPU memory",
			   r->name, (unsigned long long)n);
		return err;
	}
	dev->released = r->cons;
	return 0;
}

/*
 * One window from r->cons, @prod being the producers' position: the
 * records published there handed to @d (ring_walk's result for the copy
 * looked at first, or WALK_STOP), or a negative EGPU_E* code.
 */
static int dev_window(struct event_ring *r, uint64_t prod, struct delivery *d)
{
	struct ring_dev *dev = r->dev;
	uint64_t from = r->cons, off = from & (r->cap - 1), end = from;
	uint64_t n = min_u64(min_u64(prod - from, dev->mirror_len),
			     r->cap + r->max_record - off);
	struct ring_window w = { .base = dev->mirror, .from = from,
				 .starts_end = from + min_u64(r->cap - off, n),
				 .bytes_end = from + n };
	int seen, got, err;

	err = dev_read(r, dev->mirror, data_addr(r, from), n);
	if (err)
		return err;
	seen = ring_walk(r, &w, NULL, &end);
	if (seen < 0 || end == from)
		return seen;
	/* Published before this copy started: whole in it. */
	err = dev_read(r, dev->mirror, data_addr(r, from), end - from);
	if (err)
		return err;
	w.bytes_end = end;
	got = ring_walk(r, &w, d, &r->cons);
	if (r->cons != dev->released && (err = dev_release(r)))
		return err;
	return got < 0 ? got : got == WALK_STOP ? WALK_STOP : seen;
}

int ring_dev_consume(struct event_ring *r, struct delivery *d)
{
	struct ring_dev *dev = r->dev;
	uint64_t prod;
	int err = r->cons != dev->released ? dev_release(r) : 0;

	if (!err)
		err = dev_read(r, &prod, dev->dev_ring +
			       offsetof(struct dev_ring, prod), sizeof(prod));
	while (!err && r->cons < prod) {
		uint64_t from = r->cons;
		int end = dev_window(r, prod, d);

		if (end < 0)
			err = end;
		/* Go on past a window's end or a record it cut short. */
		else if (end == WALK_WAIT || end == WALK_STOP || r->cons == from)
			break;
	}
	return err;
}

bool ring_dev_ready(const struct event_ring *r)
{
	uint64_t word = 0;

	if (dev_read(r, &word, data_addr(r, r->cons), sizeof(word)))
		return false;
	return (word >> 32) & RING_COMMIT;
}

uint64_t ring_dev_drops(const struct event_ring *r)
{
	struct ring_dev *dev = ring_dev_bound(r);
	uint64_t drops;

	if (!dev)
		return 0;
	/* A failed copy answers the last count read. */
	if (!dev_read(r, &drops, dev->store + offsetof(struct ring_ctl, drops),
		      sizeof(drops)))
		__atomic_store_n(&dev->drops, drops, __ATOMIC_RELAXED);
	return __atomic_load_n(&dev->drops, __ATOMIC_RELAXED);
}

/* The ring map's stream and staging buffer (dev_map.c) as the copier. */
static int map_read(void *io, void *dst, uint64_t addr, size_t n)
{
	return dev_map_read(io, dst, addr, n) ? EGPU_ECUDA : 0;
}

static int map_write(void *io, uint64_t addr, const void *src, size_t n)
{
	return dev_map_write(io, addr, src, n) ? EGPU_ECUDA : 0;
}

static int map_zero(void *io, uint64_t addr, size_t n)
{
	return dev_map_zero(io, addr, n) ? EGPU_ECUDA : 0;
}

void ring_bind_map(struct event_ring *r, struct dev_map *m)
{
	const struct ring_copier c = { .read = map_read, .write = map_write,
				       .zero = map_zero, .io = m };

	ring_bind_copier(r, &c, dev_map_data(m));
}
