/* SPDX-License-Identifier: MIT */
/*
 * Reading a record file back (egpu_record_file_read): the header checked,
 * then the records walked in place in the mapped file, each handed over
 * as a ring callback gets it (a warp's batch unpacked, discards skipped).
 * The writer: lib/api/ringbuf_batch.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/internal.h"
#include "maps/ring_layout.h"

/*
 * Hand the records of a warp's batch @rec to @fn one by one, each made
 * contiguous in @buf (RING_RECORD_MAX bytes): fn's result when < 0, else
 * the records handed over, or EGPU_EFORMAT.
 */
static long unpack_batch(const char *path, size_t off,
			 const struct egpu_chunk_rec *rec, uint64_t *buf,
			 egpu_sample_fn fn, void *user)
{
	struct ring_batch b = { 0 };
	const uint64_t *words = (const uint64_t *)((const uint8_t *)rec->data + sizeof(b));
	uint32_t nwords;

	if (rec->size >= sizeof(b))
		memcpy(&b, rec->data, sizeof(b));
	if (rec->size < sizeof(b) || !b.count || b.count > RING_BATCH_MAX ||
	    ring_batch_size(b.count, b.len) != RING_HDR_SIZE + rec->size)
		return err_set(EGPU_EFORMAT,
			       "'%s': the batch at offset %zu (%u bytes) claims %u records of %u bytes",
			       path, off, rec->size, b.count, b.len);
	nwords = (b.len + 7) / 8;
	for (uint32_t i = 0; i < b.count; i++) {
		int ret;

		for (uint32_t k = 0; k < nwords; k++)
			buf[k] = words[(size_t)k * b.count + i];
		if ((ret = fn(user, buf, b.len)) < 0)
			return ret;
	}
	return b.count;
}

/* The header of the @len mapped bytes @p of @path: where records start. */
static long records_start(const char *path, const uint8_t *p, size_t len)
{
	struct egpu_record_file_header h;

	if (len < sizeof(h))
		return err_set(EGPU_EFORMAT, "'%s': %zu bytes, no record file header",
			       path, len);
	memcpy(&h, p, sizeof(h));
	if (memcmp(h.magic, EGPU_RECORD_FILE_MAGIC, sizeof(h.magic)) ||
	    h.version < 1 || h.version > EGPU_RECORD_FILE_VERSION ||
	    h.hdr_size < sizeof(h) || h.hdr_size % 8 || h.hdr_size > len)
		return err_set(EGPU_EFORMAT,
			       "'%s' is no record file of version 1 to %u (egpu_ringbuf_opts.path)",
			       path, EGPU_RECORD_FILE_VERSION);
	return h.hdr_size;
}

/*
 * The records of the @len mapped bytes @p of @path, after its header: the
 * body is one chunk (egpu_chunk_next), a batch's records handed over one
 * by one.
 */
static long walk(const char *path, const uint8_t *p, size_t len,
		 egpu_sample_fn fn, void *user)
{
	long start = records_start(path, p, len), n = 0, got = 0;
	struct egpu_chunk_iter it = { p + (start < 0 ? 0 : start), p + len };
	struct egpu_chunk_rec rec;
	uint64_t *buf = NULL;
	int more = 0;

	if (start < 0)
		return start;
	while (got >= 0 && (more = egpu_chunk_next(&it, &rec)) == 1) {
		size_t off = (size_t)((const uint8_t *)rec.data - p) - RING_HDR_SIZE;

		if (!(rec.flags & RING_BATCH)) {
			got = fn(user, rec.data, rec.size);
			n += got < 0 ? 0 : 1;
			continue;
		}
		if (!buf && !(buf = malloc(RING_RECORD_MAX))) {
			got = err_set(EGPU_ENOMEM, "'%s': out of memory", path);
			break;
		}
		got = unpack_batch(path, off, &rec, buf, fn, user);
		n += got < 0 ? 0 : got;
	}
	free(buf);
	if (got < 0)
		return got;
	if (more < 0)
		return err_set(EGPU_EFORMAT,
			       "'%s': the record at offset %zu is cut short or no record",
			       path, (size_t)(it.at - p));
	return n;
}

long egpu_record_file_read(const char *path, egpu_sample_fn fn, void *user)
{
	struct stat st;
	void *p = NULL;
	long n;
	int fd;

	if (!path || !fn)
		return err_set(EGPU_EINVAL, "egpu_record_file_read: %s is NULL",
			       path ? "fn" : "path");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		n = err_set(EGPU_EIO, "'%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return n;
	}
	if (st.st_size)
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return err_set(EGPU_EIO, "'%s': mapping %lld bytes: %s", path,
			       (long long)st.st_size, strerror(errno));
	n = walk(path, p, (size_t)st.st_size, fn, user);
	if (p)
		munmap(p, (size_t)st.st_size);
	return n;
}
