/* SPDX-License-Identifier: MIT */
/*
 * Batch and file delivery (ringbuf_batch.h). For a batch callback the
 * ring hands records over one by one, each valid during its call only (it
 * may point into a copy or a gather buffer the next record reuses), so
 * records are copied into one buffer in the ring's own record format
 * (8-byte header, payload padded to 8): the callback gets pointers into
 * it, a file gets its bytes in one write per flush. Without a batch
 * callback the ring hands over chunks, whole windows of records as it
 * holds them (ring_part.chunk): the file gets them raw, appended to the
 * buffer with one copy each (or written at once when larger), and a
 * chunk callback gets them where they lie. Each consumer thread gathers
 * into its own lane; flushes to the file take a lock, so a flush's
 * records stay together and each lane's (each shard's) stay in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/ringbuf_batch.h"
#include "core/core.h"
#include "maps/ring_layout.h"

#define DEFAULT_BATCH_BYTES (1u << 20)
/*
 * A buffer holds the largest record, and a warp's batch record taken
 * whole (rb_batch_take_batch): at most RING_RECORD_MAX bytes in the ring,
 * and a header more per record once its records stand apart.
 */
#define BATCH_BYTES_MIN (RING_RECORD_MAX + RING_BATCH_MAX * RING_HDR_SIZE)

/* One consumer thread's records, gathered. */
struct rb_lane {
	struct rb_batch *b;
	uint8_t *buf;        /* records gathered, ring format */
	size_t used;
	struct egpu_record *recs; /* one per record in buf (fn only) */
	size_t n;
};

struct rb_batch {
	egpu_batch_fn fn;    /* NULL: chunks, not records, are taken */
	egpu_chunk_fn chunk; /* chunks, after the file got them */
	void *user;
	int fd;              /* -1: no file */
	const char *path;
	pthread_mutex_t file_lock; /* one lane's flush at a time */
	size_t cap;          /* of each lane's buffer */
	uint32_t lanes;
	struct rb_lane lane[];
};

static int lane_init(struct rb_batch *b, struct rb_lane *l)
{
	*l = (struct rb_lane){ .b = b, .buf = malloc(b->cap) };
	if (b->fn)
		l->recs = malloc(b->cap / RING_HDR_SIZE * sizeof(*l->recs));
	if (!l->buf || (b->fn && !l->recs))
		return err_set(EGPU_ENOMEM, "ring buffer: a %zu-byte batch buffer",
			       b->cap);
	return 0;
}

/* Write @n bytes at @p to the file, across short writes and EINTR. */
static int write_bytes(const struct rb_batch *b, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(b->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return err_set(EGPU_EIO,
				       "ring buffer: writing %zu bytes of records to '%s': %s",
				       n, b->path, w < 0 ? strerror(errno) : "no progress");
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A record file's header (struct egpu_record_file_header), at its start. */
static int write_header(const struct rb_batch *b)
{
	struct egpu_record_file_header h = { .version = EGPU_RECORD_FILE_VERSION,
					     .hdr_size = sizeof(h) };

	memcpy(h.magic, EGPU_RECORD_FILE_MAGIC, sizeof(h.magic));
	return write_bytes(b, (const uint8_t *)&h, sizeof(h));
}

int rb_batch_new(const struct egpu_ringbuf_opts *o, void *user,
		 uint32_t lanes, struct rb_batch **out)
{
	size_t cap = OPTS_GET(o, batch_bytes, 0);
	struct rb_batch *b = calloc(1, sizeof(*b) + lanes * sizeof(b->lane[0]));
	int err = 0;

	if (!b)
		return err_set(EGPU_ENOMEM, "ring buffer: out of memory");
	/* Whole records only: room for the largest one, or batch. */
	if (cap < BATCH_BYTES_MIN)
		cap = cap ? BATCH_BYTES_MIN : DEFAULT_BATCH_BYTES;
	*b = (struct rb_batch){ .fn = OPTS_GET(o, batch_fn, NULL),
				.chunk = OPTS_GET(o, chunk_fn, NULL),
				.user = user, .fd = -1,
				.cap = (cap + 7) & ~(size_t)7,
				.path = OPTS_GET(o, path, NULL) };
	pthread_mutex_init(&b->file_lock, NULL);
	for (; b->lanes < lanes && !err; b->lanes++)
		err = lane_init(b, &b->lane[b->lanes]);
	if (!err && b->path &&
	    (b->fd = open(b->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0644)) < 0)
		err = err_set(EGPU_EIO, "ring buffer: cannot create '%s': %s",
			      b->path, strerror(errno));
	if (!err && b->fd >= 0)
		err = write_header(b);
	if (err) {
		rb_batch_free(b);
		return err;
	}
	*out = b;
	return 0;
}

struct ring_part rb_batch_part(struct rb_batch *b, uint32_t k)
{
	if (!b->fn)
		return (struct ring_part){ .chunk = rb_batch_take_chunk,
					   .user = &b->lane[k],
					   .flush = rb_batch_flush };
	return (struct ring_part){ .fn = rb_batch_take,
				   .take_batch = rb_batch_take_batch,
				   .user = &b->lane[k], .flush = rb_batch_flush };
}

void rb_batch_free(struct rb_batch *b)
{
	if (!b)
		return;
	if (b->fd >= 0)
		close(b->fd);
	for (uint32_t k = 0; k < b->lanes; k++) {
		free(b->lane[k].recs);
		free(b->lane[k].buf);
	}
	pthread_mutex_destroy(&b->file_lock);
	free(b);
}

/* One write of @n bytes, whole in the file (lanes write at once). */
static int write_locked(struct rb_batch *b, const void *p, size_t n)
{
	int err;

	pthread_mutex_lock(&b->file_lock);
	err = write_bytes(b, p, n);
	pthread_mutex_unlock(&b->file_lock);
	return err;
}

int rb_batch_flush(void *lane)
{
	struct rb_lane *l = lane;
	struct rb_batch *b = l->b;
	int err = 0;

	if (!l->used)
		return 0;
	if (b->fd >= 0)
		err = write_locked(b, l->buf, l->used);
	if (!err && b->fn)
		err = b->fn(b->user, l->recs, l->n);
	l->used = l->n = 0;
	return err;
}

int rb_batch_take(void *lane, const void *data, size_t size)
{
	struct rb_lane *l = lane;
	size_t need = ring_record_size(size);
	uint64_t hdr = size; /* struct ring_hdr: len, flags 0 */
	int err = 0;

	if (l->b->cap - l->used < need)
		err = rb_batch_flush(l); /* the record is kept all the same */
	memcpy(l->buf + l->used, &hdr, sizeof(hdr));
	memcpy(l->buf + l->used + RING_HDR_SIZE, data, size);
	memset(l->buf + l->used + RING_HDR_SIZE + size, 0,
	       need - RING_HDR_SIZE - size);
	if (l->b->fn)
		l->recs[l->n++] = (struct egpu_record){
			.data = l->buf + l->used + RING_HDR_SIZE, .size = size };
	l->used += need;
	return err;
}

/*
 * A warp's batch, straight from its column-major words into the buffer:
 * per record a header and its words, no call and no copy of variable
 * size. The bytes past @len in a record's last word are the producer's
 * (whatever its lane stored): zeroed, as rb_batch_take pads.
 */
int rb_batch_take_batch(void *lane, const uint64_t *words, uint32_t count,
			uint32_t len, uint32_t from)
{
	struct rb_lane *l = lane;
	uint32_t nwords = (len + 7) / 8;
	uint64_t last = len % 8 ? ~0ull >> (64 - 8 * (len % 8)) : ~0ull;
	uint64_t *out;
	int err = 0;

	if (l->b->cap - l->used < (size_t)(count - from) * (RING_HDR_SIZE + 8 * nwords))
		err = rb_batch_flush(l); /* the records are kept all the same */
	out = (uint64_t *)(l->buf + l->used);
	for (uint32_t i = from; i < count; i++) {
		*out++ = len; /* struct ring_hdr: len, flags 0 */
		if (l->b->fn)
			l->recs[l->n++] = (struct egpu_record){ .data = out,
								.size = len };
		for (uint32_t k = 0; k < nwords; k++)
			*out++ = words[(size_t)k * count + i];
		if (nwords)
			out[-1] &= last;
	}
	l->used = (size_t)((uint8_t *)out - l->buf);
	return err;
}

int rb_batch_take_chunk(void *lane, const void *data, size_t size)
{
	struct rb_lane *l = lane;
	struct rb_batch *b = l->b;
	int err = 0;

	if (b->fd >= 0 && b->cap - l->used < size)
		err = rb_batch_flush(l);
	if (!err && b->fd >= 0 && size > b->cap) {
		err = write_locked(b, data, size);
	} else if (!err && b->fd >= 0) {
		memcpy(l->buf + l->used, data, size);
		l->used += size;
	}
	if (!err && b->chunk)
		err = b->chunk(b->user, data, size);
	return err;
}
