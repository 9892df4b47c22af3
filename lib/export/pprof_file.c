/* SPDX-License-Identifier: MIT */
/* egpu_trace_write_pprof: the Profile of pprof.c, gzip'd into a file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "api/trace_data.h"
#include "export/pprof.h"

/* @len bytes to @path ("-": stdout) through gzip; 0 or EGPU_EIO. */
static int write_gz(const char *path, const uint8_t *buf, size_t len)
{
	bool out = !strcmp(path, "-");
	int fd = out ? dup(STDOUT_FILENO) : -1;
	gzFile gz = out ? (fd >= 0 ? gzdopen(fd, "wb") : NULL) :
			  gzopen(path, "wb");
	size_t done = 0;
	int closed;

	if (!gz) {
		if (fd >= 0)
			close(fd);
		return err_set(EGPU_EIO, "egpu_trace_write_pprof: %s: %s", path,
			       strerror(errno ? errno : ENOMEM));
	}
	while (done < len) {
		unsigned chunk = len - done > (1u << 30) ? 1u << 30 :
			(unsigned)(len - done);
		int n = gzwrite(gz, buf + done, chunk);

		if (n <= 0)
			break;
		done += (size_t)n;
	}
	closed = gzclose(gz);
	if (done < len || closed != Z_OK)
		return err_set(EGPU_EIO, "egpu_trace_write_pprof: %s: write "
			       "failed (%s)", path, strerror(errno ? errno : EIO));
	return 0;
}

int pprof_write(const struct trace_data *td, bool no_copies, const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int err = pprof_build(td, no_copies, &buf, &len);

	if (!err)
		err = write_gz(path, buf, len);
	free(buf);
	return err;
}

int egpu_trace_write_pprof(const egpu_trace *trace, const char *path,
			   const struct egpu_pprof_opts *opts)
{
	const struct trace_data *td;
	int err;

	err = OPTS_VALID(opts, egpu_pprof_opts, "egpu_trace_write_pprof");
	if (err)
		return err;
	if (!path)
		return err_set(EGPU_EINVAL, "egpu_trace_write_pprof: no path");
	err = trace_data_of(trace, "egpu_trace_write_pprof", &td);
	return err ? err : pprof_write(td, OPTS_GET(opts, no_copies, false),
				       path);
}
