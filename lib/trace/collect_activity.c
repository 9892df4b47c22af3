/* SPDX-License-Identifier: MIT */
/*
 * Activity buffers: CUPTI fills them with what the GPU ran and hands them
 * back, on its own thread or inside a flush; their kernel, memcpy and
 * memset records become the trace's operations. The record structs are
 * the newest the installed cupti.h defines (collect.c checks that the
 * loaded libcupti is at least that version).
 */
#include <stdlib.h>
#include <string.h>

#include "collect_impl.h"

/* The collection buffers go to; NULL between traces. */
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static struct collect *sink;
static size_t buffer_size;

static const CUpti_ActivityKind copy_kinds[] = {
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
};

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size,
				      size_t *max_records)
{
	/* records are 8-byte aligned; a NULL buffer makes CUPTI drop them */
	*buf = aligned_alloc(8, buffer_size);
	*size = *buf ? buffer_size : 0;
	*max_records = 0;
}

static const char *copy_name(uint8_t kind)
{
	static const char *const names[] = {
		[CUPTI_ACTIVITY_MEMCPY_KIND_HTOD] = "memcpy HtoD",
		[CUPTI_ACTIVITY_MEMCPY_KIND_DTOH] = "memcpy DtoH",
		[CUPTI_ACTIVITY_MEMCPY_KIND_HTOA] = "memcpy HtoA",
		[CUPTI_ACTIVITY_MEMCPY_KIND_ATOH] = "memcpy AtoH",
		[CUPTI_ACTIVITY_MEMCPY_KIND_ATOA] = "memcpy AtoA",
		[CUPTI_ACTIVITY_MEMCPY_KIND_ATOD] = "memcpy AtoD",
		[CUPTI_ACTIVITY_MEMCPY_KIND_DTOA] = "memcpy DtoA",
		[CUPTI_ACTIVITY_MEMCPY_KIND_DTOD] = "memcpy DtoD",
		[CUPTI_ACTIVITY_MEMCPY_KIND_HTOH] = "memcpy HtoH",
		[CUPTI_ACTIVITY_MEMCPY_KIND_PTOP] = "memcpy PtoP",
	};

	return kind < ARRAY_SIZE(names) && names[kind] ? names[kind]
						       : "memcpy";
}

static const char *pool_name(struct collect *c, const char *name)
{
	return strpool_add(&c->names, name, strlen(name));
}

/* The kernel's demangled name, demangled once per kernel. */
static const char *kernel_name(struct collect *c, const char *name)
{
	const char *d;

	if (!name)
		return pool_name(c, "?");
	d = ptrmap_get(&c->kernel_names, (uintptr_t)name);
	if (!d && (d = strpool_demangled(&c->names, name)) &&
	    ptrmap_put(&c->kernel_names, (uintptr_t)name, (void *)d))
		return NULL;
	return d;
}

/* The fields every GPU record kind names alike. */
#define OP_FROM(op_kind, rec, op_name, op_bytes)                              \
	((struct trace_op){ .kind = (op_kind), .corr = (rec)->correlationId,  \
			    .device = (rec)->deviceId,                        \
			    .context = (rec)->contextId,                      \
			    .stream = (rec)->streamId, .start = (rec)->start, \
			    .end = (rec)->end, .name = (op_name),             \
			    .bytes = (op_bytes), .api = TRACE_NONE })

/* The record as an operation; false for kinds the trace does not keep. */
static bool record_op(struct collect *c, const CUpti_Activity *r,
		      struct trace_op *op)
{
	const CUpti_ActivityKernel10 *k = (const void *)r;
	const CUpti_ActivityMemcpy6 *m = (const void *)r;
	const CUpti_ActivityMemset4 *s = (const void *)r;

	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		*op = OP_FROM(TRACE_KERNEL, k, kernel_name(c, k->name), 0);
		return true;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		*op = OP_FROM(TRACE_MEMCPY, m,
			      pool_name(c, copy_name(m->copyKind)), m->bytes);
		return true;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		*op = OP_FROM(TRACE_MEMSET, s, pool_name(c, "memset"),
			      s->bytes);
		return true;
	default:
		return false;
	}
}

static void add_op(struct collect *c, const struct trace_op *op)
{
	/* incomplete (unsynchronized at a forced flush) or nameless */
	if (!op->start || op->end < op->start || !op->name) {
		c->lost++;
		return;
	}
	if (!ARRAY_GROW(c->ops, c->op_cap, c->op_n, 4096)) {
		c->lost++;
		return;
	}
	c->ops[c->op_n++] = *op;
	if (op->end > c->newest_end)
		c->newest_end = op->end;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
				      uint8_t *buf, size_t size, size_t valid)
{
	const struct cupti_lib *lib = cupti_lib();
	CUpti_Activity *r = NULL;
	struct trace_op op;
	size_t dropped = 0;

	(void)size;
	pthread_mutex_lock(&sink_lock);
	if (sink) {
		while (lib->cuptiActivityGetNextRecord(buf, valid, &r) ==
		       CUPTI_SUCCESS)
			if (record_op(sink, r, &op))
				add_op(sink, &op);
		if (sink->opts.keep_ns)
			collect_trim(sink);
		if (sink->stream)
			collect_stream_drain(sink, false);
		if (lib->cuptiActivityGetNumDroppedRecords(ctx, stream,
							   &dropped) ==
		    CUPTI_SUCCESS)
			sink->lost += dropped;
	}
	pthread_mutex_unlock(&sink_lock);
	free(buf);
}

int collect_activity_start(struct collect *c)
{
	const struct cupti_lib *lib = cupti_lib();
	int err;

	pthread_mutex_lock(&sink_lock);
	sink = c;
	buffer_size = c->opts.buffer_size;
	pthread_mutex_unlock(&sink_lock);
	err = cupti_check(lib->cuptiActivityRegisterCallbacks(buffer_requested,
							      buffer_completed),
			  EGPU_ENODEV, "cuptiActivityRegisterCallbacks");
	if (!err)
		err = cupti_check(lib->cuptiActivityEnable(
				CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
			EGPU_ENODEV, "cuptiActivityEnable(CONCURRENT_KERNEL)");
	for (size_t i = 0; !err && !c->opts.no_copies &&
			   i < ARRAY_SIZE(copy_kinds); i++)
		err = cupti_check(lib->cuptiActivityEnable(copy_kinds[i]),
				  EGPU_ENODEV, "cuptiActivityEnable");
	if (err) {
		err_prefix("egpu_trace_start");
		collect_activity_stop();
	}
	return err;
}

void collect_activity_stop(void)
{
	const struct cupti_lib *lib = cupti_lib();

	lib->cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	lib->cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	for (size_t i = 0; i < ARRAY_SIZE(copy_kinds); i++)
		lib->cuptiActivityDisable(copy_kinds[i]);
	pthread_mutex_lock(&sink_lock);
	sink = NULL;
	pthread_mutex_unlock(&sink_lock);
}
