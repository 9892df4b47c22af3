/* SPDX-License-Identifier: MIT */
/*
 * Batch and file delivery (ringbuf_batch.h). The ring hands records over
 * one by one, each valid during its call only (it may point into a copy
 * or a gather buffer the next record reuses), so records are copied into
 * one buffer in the ring's own record format (8-byte header, payload
 * padded to 8): a batch callback gets pointers into it, a file gets its
 * bytes in one write per flush.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/ringbuf_batch.h"
#include "core/core.h"
#include "maps/ring_layout.h"

#define DEFAULT_BATCH_BYTES (1u << 20)

struct rb_batch {
	egpu_batch_fn fn;
	void *user;
	int fd;              /* -1: no file */
	const char *path;
	uint8_t *buf;        /* records gathered, ring format */
	size_t cap, used;
	struct egpu_record *recs; /* one per record in buf (fn only) */
	size_t n;
};

int rb_batch_new(const struct egpu_ringbuf_opts *o, void *user,
		 struct rb_batch **out)
{
	size_t cap = OPTS_GET(o, batch_bytes, 0);
	struct rb_batch *b = calloc(1, sizeof(*b));

	/* Whole records only: room for the largest one. */
	if (cap < RING_RECORD_MAX)
		cap = cap ? RING_RECORD_MAX : DEFAULT_BATCH_BYTES;
	cap = (cap + 7) & ~(size_t)7;
	if (b) {
		*b = (struct rb_batch){ .fn = OPTS_GET(o, batch_fn, NULL),
					.user = user, .fd = -1,
					.cap = cap, .buf = malloc(cap) };
		if (b->fn)
			b->recs = malloc(cap / RING_HDR_SIZE * sizeof(*b->recs));
	}
	if (!b || !b->buf || (b->fn && !b->recs)) {
		rb_batch_free(b);
		return err_set(EGPU_ENOMEM, "ring buffer: a %zu-byte batch buffer",
			       cap);
	}
	b->path = OPTS_GET(o, path, NULL);
	if (b->path &&
	    (b->fd = open(b->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0644)) < 0) {
		int e = errno;

		rb_batch_free(b);
		return err_set(EGPU_EIO, "ring buffer: cannot create '%s': %s",
			       OPTS_GET(o, path, NULL), strerror(e));
	}
	*out = b;
	return 0;
}

void rb_batch_free(struct rb_batch *b)
{
	if (!b)
		return;
	if (b->fd >= 0)
		close(b->fd);
	free(b->recs);
	free(b->buf);
	free(b);
}

/* Write what was gathered to the file, across short writes and EINTR. */
static int write_all(const struct rb_batch *b)
{
	const uint8_t *p = b->buf;
	size_t n = b->used;

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

int rb_batch_flush(struct rb_batch *b)
{
	int err = 0;

	if (!b->used)
		return 0;
	if (b->fd >= 0)
		err = write_all(b);
	if (!err && b->fn)
		err = b->fn(b->user, b->recs, b->n);
	b->used = b->n = 0;
	return err;
}

int rb_batch_take(void *user, const void *data, size_t size)
{
	struct rb_batch *b = user;
	size_t need = ring_record_size(size);
	uint64_t hdr = size; /* struct ring_hdr: len, flags 0 */
	int err = 0;

	if (b->cap - b->used < need)
		err = rb_batch_flush(b); /* the record is kept all the same */
	memcpy(b->buf + b->used, &hdr, sizeof(hdr));
	memcpy(b->buf + b->used + RING_HDR_SIZE, data, size);
	memset(b->buf + b->used + RING_HDR_SIZE + size, 0,
	       need - RING_HDR_SIZE - size);
	if (b->fn)
		b->recs[b->n++] = (struct egpu_record){
			.data = b->buf + b->used + RING_HDR_SIZE, .size = size };
	b->used += need;
	return err;
}
