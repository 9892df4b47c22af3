/* SPDX-License-Identifier: MIT */
/*
 * egpu_trace_*: a CUPTI collection (lib/trace/collect.h), joined by
 * correlation id when stopped, read through the writers and totals of
 * lib/trace/trace.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/trace_data.h"
#include "core/core.h"
#include "trace/collect.h"
#include "trace/trace.h"

#define DEFAULT_FRAMES 64
#define DEFAULT_BUFFER (4u << 20)
#define MIN_BUFFER (64u << 10)
#define MIN_STREAM_SIZE (64u << 10)

struct egpu_trace {
	struct collect *col;
	struct trace_data *td;       /* once stopped */
	struct collect_counts counts;
	uint64_t matched;
	struct egpu_trace_kernel *kernels;
	size_t kernel_cnt;
	char *stream_path;           /* the timeline streamed there */
};

/* What streaming asks for makes sense; 0 or EGPU_EINVAL. */
static int check_stream(const struct collect_opts *co)
{
	if (co->stream_path && !*co->stream_path)
		return err_set(EGPU_EINVAL, "egpu_trace_start: stream_path is "
			       "empty");
	if (co->stream_path && co->keep_ns)
		return err_set(EGPU_EINVAL, "egpu_trace_start: a flight "
			       "recorder (keep_ns) writes at its end: no "
			       "stream_path with it");
	if ((co->max_size || co->max_files) && !co->stream_path)
		return err_set(EGPU_EINVAL, "egpu_trace_start: max_size and "
			       "max_files bound a streamed timeline: set "
			       "stream_path");
	if (co->max_files && !co->max_size)
		return err_set(EGPU_EINVAL, "egpu_trace_start: max_files "
			       "rotates at max_size: set it");
	if (co->max_size && co->max_size < MIN_STREAM_SIZE)
		return err_set(EGPU_EINVAL, "egpu_trace_start: max_size %llu: "
			       "at least %u", (unsigned long long)co->max_size,
			       MIN_STREAM_SIZE);
	return 0;
}

egpu_trace *egpu_trace_start(const struct egpu_trace_opts *opts)
{
	struct collect_opts co;
	struct egpu_trace *t;

	if (OPTS_VALID(opts, egpu_trace_opts, "egpu_trace_start"))
		return NULL;
	co = (struct collect_opts){
		.max_frames = OPTS_GET(opts, max_frames, 0),
		.no_copies = OPTS_GET(opts, no_copies, false),
		.buffer_size = OPTS_GET(opts, buffer_size, 0),
		.no_python = OPTS_GET(opts, no_python, false),
		.keep_ns = OPTS_GET(opts, keep_ns, 0),
		.stream_path = OPTS_GET(opts, stream_path, NULL),
		.max_size = OPTS_GET(opts, max_size, 0),
		.max_files = OPTS_GET(opts, max_files, 0),
	};
	if (!co.max_frames)
		co.max_frames = DEFAULT_FRAMES;
	if (!co.buffer_size)
		co.buffer_size = DEFAULT_BUFFER;
	if (co.max_frames > COLLECT_MAX_FRAMES) {
		err_set(EGPU_EINVAL, "egpu_trace_start: max_frames %u: at most "
			"%u", co.max_frames, COLLECT_MAX_FRAMES);
		return NULL;
	}
	if (co.buffer_size < MIN_BUFFER || co.buffer_size % 8) {
		err_set(EGPU_EINVAL, "egpu_trace_start: buffer_size %zu: "
			"want a multiple of 8 of at least %u", co.buffer_size,
			MIN_BUFFER);
		return NULL;
	}
	if (check_stream(&co))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t || (co.stream_path &&
		   !(t->stream_path = strdup(co.stream_path)))) {
		free(t);
		err_set(EGPU_ENOMEM, "egpu_trace_start: out of memory");
		return NULL;
	}
	t->col = collect_start(&co);
	if (!t->col) {
		free(t->stream_path);
		free(t);
		return NULL;
	}
	return t;
}

static void own_cost(const egpu_trace *t, struct egpu_trace_stats *stats)
{
	const struct collect_counts *n = &t->counts;

	OPTS_SET(stats, host_ns, n->host_ns);
	OPTS_SET(stats, stack_ns, n->stack_ns);
	OPTS_SET(stats, python_ns, n->python_ns);
	OPTS_SET(stats, stacks, n->stacks);
	OPTS_SET(stats, stacks_slow, n->stacks_slow);
	OPTS_SET(stats, stacks_reused, n->stacks_reused);
	OPTS_SET(stats, slow_frame, n->slow_frame);
	OPTS_SET(stats, dropped, n->dropped);
	OPTS_SET(stats, stream_full, n->stream_full);
}

int egpu_trace_stop(egpu_trace *t)
{
	struct trace_data *td;

	if (!t)
		return err_set(EGPU_EINVAL, "egpu_trace_stop: no trace");
	if (t->td)
		return 0;
	td = collect_stop(t->col, &t->counts);
	if (!td)
		return egpu_errcode();
	t->matched = trace_join(td);
	t->td = td;
	return trace_kernels(td, &t->kernels, &t->kernel_cnt);
}

void egpu_trace_free(egpu_trace *t)
{
	if (!t)
		return;
	collect_free(t->col);
	free(t->kernels);
	free(t->stream_path);
	free(t);
}

static int stopped(const egpu_trace *t, const char *fn)
{
	if (!t)
		return err_set(EGPU_EINVAL, "%s: no trace", fn);
	if (!t->td)
		return err_set(EGPU_EINVAL, "%s: the trace is running; call "
			       "egpu_trace_stop() first", fn);
	return 0;
}

int trace_data_of(const egpu_trace *t, const char *fn,
		  const struct trace_data **td)
{
	int err = stopped(t, fn);

	*td = err ? NULL : t->td;
	return err;
}

static int write_summary(const struct trace_data *td, FILE *f)
{
	return trace_write_summary(td, f, 0);
}

static int (*const writers[])(const struct trace_data *, FILE *) = {
	[EGPU_TRACE_FOLDED] = trace_write_folded,
	[EGPU_TRACE_CHROME] = trace_write_chrome,
	[EGPU_TRACE_SVG] = trace_write_svg,
	[EGPU_TRACE_SUMMARY] = write_summary,
	[EGPU_TRACE_PERFETTO] = trace_write_perfetto,
};

int egpu_trace_write(const egpu_trace *t, enum egpu_trace_format format,
		     const char *path)
{
	bool out = path && !strcmp(path, "-");
	FILE *f;
	int err;

	err = stopped(t, "egpu_trace_write");
	if (err)
		return err;
	if ((unsigned)format >= ARRAY_SIZE(writers) || !writers[format])
		return err_set(EGPU_EINVAL,
			       "egpu_trace_write: unknown format %d",
			       (int)format);
	if (!path)
		return err_set(EGPU_EINVAL, "egpu_trace_write: no path");
	if (t->stream_path && format == EGPU_TRACE_PERFETTO)
		return strcmp(path, t->stream_path) ?
		       err_set(EGPU_EINVAL, "egpu_trace_write: %s: the Perfetto "
			       "timeline was streamed to %s", path,
			       t->stream_path) : 0;
	if (t->stream_path && format == EGPU_TRACE_CHROME)
		return err_set(EGPU_EINVAL, "egpu_trace_write: %s: a streamed "
			       "trace keeps totals only, not the events of a "
			       "JSON timeline (its timeline is %s)", path,
			       t->stream_path);
	f = out ? stdout : fopen(path, "wb");
	if (!f)
		return err_set(EGPU_EIO, "egpu_trace_write: %s: %s", path,
			       strerror(errno));
	err = writers[format](t->td, f);
	if ((out ? fflush(f) : fclose(f)) && !err)
		err = err_set(EGPU_EIO, "egpu_trace_write: %s: %s", path,
			      strerror(errno));
	return err;
}

int egpu_trace_stats(const egpu_trace *t, struct egpu_trace_stats *stats)
{
	uint64_t kernels = 0, copies = 0, gpu_ns = 0;
	uint32_t dev[64], dev_n = 0;
	const struct trace_data *td;
	int err;

	err = stopped(t, "egpu_trace_stats");
	if (err)
		return err;
	if (!stats || stats->sz < offsetofend(struct egpu_trace_stats, sz))
		return err_set(EGPU_EINVAL, "egpu_trace_stats: set stats->sz");
	td = t->td;
	for (size_t i = 0; i < td->op_cnt; i++) {
		const struct trace_op *op = &td->ops[i];
		uint32_t d = 0;

		if (op->kind != TRACE_KERNEL) {
			copies += op_count(op);
			continue;
		}
		kernels += op_count(op);
		gpu_ns += op->end - op->start;
		while (d < dev_n && dev[d] != op->device)
			d++;
		if (d == dev_n && dev_n < ARRAY_SIZE(dev))
			dev[dev_n++] = op->device;
	}
	OPTS_SET(stats, launches, t->counts.launches);
	OPTS_SET(stats, kernels, kernels);
	OPTS_SET(stats, matched, t->matched);
	OPTS_SET(stats, copies, copies);
	OPTS_SET(stats, lost, td->lost);
	OPTS_SET(stats, gpu_ns, gpu_ns);
	OPTS_SET(stats, devices, dev_n);
	own_cost(t, stats);
	return 0;
}

size_t egpu_trace_kernel_cnt(const egpu_trace *t)
{
	return t && t->td ? t->kernel_cnt : 0;
}

const struct egpu_trace_kernel *egpu_trace_kernel(const egpu_trace *t,
						  size_t i)
{
	return t && t->td && i < t->kernel_cnt ? &t->kernels[i] : NULL;
}
