/* SPDX-License-Identifier: MIT */
/*
 * Reading a record file back (egpu_record_file_read): the header checked,
 * then the records walked in place in the mapped file, each handed over
 * as a ring callback gets it. The writer: lib/api/ringbuf_batch.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/internal.h"
#include "maps/ring_layout.h"

/* The records of the @len mapped bytes @p of @path, after its header. */
static long walk(const char *path, const uint8_t *p, size_t len,
		 egpu_sample_fn fn, void *user)
{
	struct egpu_record_file_header h;
	size_t off;
	long n = 0;

	if (len < sizeof(h))
		return err_set(EGPU_EFORMAT, "'%s': %zu bytes, no record file header",
			       path, len);
	memcpy(&h, p, sizeof(h));
	if (memcmp(h.magic, EGPU_RECORD_FILE_MAGIC, sizeof(h.magic)) ||
	    h.version != EGPU_RECORD_FILE_VERSION || h.hdr_size < sizeof(h) ||
	    h.hdr_size % 8 || h.hdr_size > len)
		return err_set(EGPU_EFORMAT,
			       "'%s' is no record file of version %u (egpu_ringbuf_opts.path)",
			       path, EGPU_RECORD_FILE_VERSION);
	for (off = h.hdr_size; off < len; n++) {
		struct ring_hdr rh;
		int ret;

		if (len - off < sizeof(rh))
			return err_set(EGPU_EFORMAT, "'%s': a record header cut short at offset %zu",
				       path, off);
		memcpy(&rh, p + off, sizeof(rh));
		if (rh.flags || ring_record_size(rh.len) > len - off)
			return err_set(EGPU_EFORMAT,
				       "'%s': the record at offset %zu (%u bytes, flags %u) is cut short or no record",
				       path, off, rh.len, rh.flags);
		ret = fn(user, p + off + sizeof(rh), rh.len);
		off += ring_record_size(rh.len);
		if (ret < 0)
			return ret;
	}
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
