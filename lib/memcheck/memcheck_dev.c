/* SPDX-License-Identifier: MIT */
/*
 * The table's backend on the GPU (memcheck_dev.h). Synchronous writes go
 * on a private non-blocking stream and are waited for there: never on the
 * legacy stream, which would wait for an application stream that may be
 * blocked in the table's host function. Stream-ordered state writes are
 * cuStreamWriteValue32 on the application's stream (captured into graphs
 * like any other work). The check's reports (memcheck_layout.h) go to
 * per-site counts in GPU memory and a log in host memory the GPU writes
 * through a mapping: malloc'd and registered, so that it stays readable
 * at exit even when the application has torn its context down.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memcheck/memcheck_dev.h"
#include "core/core.h"
#include "core/memcheck_layout.h"
#include "cuda/cu.h"

struct mc_dev {
	CUstream s;
	CUdeviceptr cell, states, cur;
	uint32_t max_slots;
	CUdeviceptr counts;      /* struct mc_counts */
	struct mc_log_rec *log;  /* host memory, MC_LOG_CAP records */
	CUdeviceptr log_dev;     /* its address for the GPU */
	CUdeviceptr hints;       /* struct mc_hint[MC_HINTS] */
	pthread_mutex_t lock; /* old */
	CUdeviceptr *old;     /* indexes published before cur */
	size_t nold, old_cap;
	struct mc_guard guard;
};

/*
 * The table's own driver calls run inside the guard (the agent's busy
 * flag) and in relaxed capture mode: a cudaMallocAsync captured into a graph publishes
 * an index (an allocation and a copy waited for on the private stream),
 * which the default global mode refuses while any stream of the process
 * captures (CUDA error 900), failing the application's capture with it.
 */
struct own {
	bool was;
	CUstreamCaptureMode mode;
};

static struct own own_enter(const struct mc_dev *d)
{
	struct own o = { d->guard.enter ? d->guard.enter() : false,
			 CU_STREAM_CAPTURE_MODE_RELAXED };

	if (cu())
		cu()->cuThreadExchangeStreamCaptureMode(&o.mode);
	return o;
}

static void own_leave(const struct mc_dev *d, struct own o)
{
	if (cu())
		cu()->cuThreadExchangeStreamCaptureMode(&o.mode);
	if (d->guard.leave)
		d->guard.leave(o.was);
}

/* Write @n bytes of @src at @dst now, on the private stream. */
static CUresult put(struct mc_dev *d, CUdeviceptr dst, const void *src,
		    size_t n)
{
	CUresult res = cu()->cuMemcpyHtoDAsync(dst, src, n, d->s);

	return res ? res : cu()->cuStreamSynchronize(d->s);
}

static int publish(void *user, const void *ix, size_t bytes)
{
	struct mc_dev *d = user;
	struct own o = own_enter(d);
	CUdeviceptr buf = 0;
	CUresult res = cu()->cuMemAlloc(&buf, bytes);

	if (!res)
		res = put(d, buf, ix, bytes);
	if (!res)
		res = put(d, d->cell, &buf, sizeof(buf));
	pthread_mutex_lock(&d->lock);
	if (res) {
		if (buf)
			cu()->cuMemFree(buf);
	} else if (d->cur && !ARRAY_GROW(d->old, d->old_cap, d->nold, 16)) {
		res = CUDA_ERROR_OUT_OF_MEMORY; /* cur stays: nothing leaks */
		put(d, d->cell, &d->cur, sizeof(d->cur));
		cu()->cuMemFree(buf);
	} else {
		if (d->cur)
			d->old[d->nold++] = d->cur;
		d->cur = buf;
	}
	pthread_mutex_unlock(&d->lock);
	own_leave(d, o);
	return res;
}

static int set_state(void *user, uint32_t slot, uint32_t v, void *stream)
{
	struct mc_dev *d = user;
	CUdeviceptr at = d->states + (CUdeviceptr)slot * sizeof(v);
	struct own o = own_enter(d);
	CUresult res = stream ? cu()->cuStreamWriteValue32(stream, at, v, 0)
			      : put(d, at, &v, sizeof(v));

	own_leave(d, o);
	return res;
}

static int host_fn(void *user, void *stream, void (*fn)(void *), void *arg)
{
	const struct mc_dev *d = user;
	struct own o = own_enter(d);
	CUresult res = cu()->cuLaunchHostFunc(stream, fn, arg);

	own_leave(d, o);
	return res;
}

static int quiesce(void *user)
{
	struct mc_dev *d = user;
	struct own o = own_enter(d);
	CUresult res = cu()->cuCtxSynchronize();

	own_leave(d, o);
	if (!res)
		mc_dev_reclaim(d);
	return res;
}

/* Zero the hints, at a tag's wrap: none made 65,536 tags ago survives. */
static CUresult forget_hints(struct mc_dev *d)
{
	CUresult res = cu()->cuMemsetD8Async(d->hints, 0, MC_HINTS *
					     sizeof(struct mc_hint), d->s);

	return res ? res : cu()->cuStreamSynchronize(d->s);
}

static int set_tag(void *user, uint32_t tag, void *stream)
{
	struct mc_dev *d = user;
	CUdeviceptr at = d->cell + offsetof(struct mc_cell, tag);
	struct own o = own_enter(d);
	CUresult res = tag ? 0 : forget_hints(d);

	if (!res)
		res = stream ? cu()->cuStreamWriteValue32(stream, at, tag, 0)
			     : put(d, at, &tag, sizeof(tag));
	own_leave(d, o);
	return res;
}

void mc_dev_reclaim(struct mc_dev *d)
{
	struct own o = own_enter(d);

	pthread_mutex_lock(&d->lock);
	for (size_t i = 0; i < d->nold; i++)
		cu()->cuMemFree(d->old[i]);
	d->nold = 0;
	pthread_mutex_unlock(&d->lock);
	own_leave(d, o);
}

/* The check's counts and log (memcheck_layout.h). */
static int make_outputs(struct mc_dev *d)
{
	struct mc_counts head = { .log_cap = MC_LOG_CAP,
				  .max_sites = MC_MAX_SITES };
	size_t log_bytes = MC_LOG_CAP * sizeof(*d->log);
	size_t bytes = MC_COUNTS_BYTES(MC_MAX_SITES);
	int err = cu_check(cu()->cuMemAlloc(&d->counts, bytes),
			   "memcheck: the site counts");

	if (!err)
		err = cu_zero(d->counts, bytes);
	if (!err)
		err = cu_check(cu()->cuMemAlloc(&d->hints, MC_HINTS *
						sizeof(struct mc_hint)),
			       "memcheck: the lookup hints");
	if (!err)
		err = cu_zero(d->hints, MC_HINTS * sizeof(struct mc_hint));
	if (!err)
		err = cu_check(put(d, d->counts, &head, sizeof(head)),
			       "memcheck: the site counts");
	if (!err && posix_memalign((void **)&d->log,
				   (size_t)sysconf(_SC_PAGESIZE), log_bytes))
		err = err_set(EGPU_ENOMEM, "memcheck: no memory for the log");
	if (err)
		return err;
	memset(d->log, 0, log_bytes);
	err = cu_check(cu()->cuMemHostRegister(d->log, log_bytes,
					       CU_MEMHOSTREGISTER_DEVICEMAP),
		       "memcheck: the log");
	if (!err)
		err = cu_check(cu()->cuMemHostGetDevicePointer(&d->log_dev,
							       d->log, 0),
			       "memcheck: the log's device address");
	return err;
}

int mc_dev_new(uint32_t max_slots, const struct mc_guard *guard,
	       struct mc_dev **out)
{
	struct mc_dev *d = calloc(1, sizeof(*d));
	struct own o;
	int err = d ? 0 : err_set(EGPU_ENOMEM, "memcheck: no memory");

	if (err)
		return err;
	if (guard)
		d->guard = *guard;
	o = own_enter(d);
	if (!cu())
		err = egpu_errcode(); /* no driver or no GPU, said why */
	if (!err)
		err = cu_check(cu()->cuStreamCreate(&d->s, CU_STREAM_NON_BLOCKING),
			       "memcheck: its stream");
	if (!err)
		err = cu_check(cu()->cuMemAlloc(&d->cell, sizeof(struct mc_cell)),
			       "memcheck: the index cell");
	if (!err)
		err = cu_check(cu()->cuMemAlloc(&d->states,
						(size_t)max_slots * sizeof(uint32_t)),
			       "memcheck: the state array");
	if (!err)
		err = cu_zero(d->states, (size_t)max_slots * sizeof(uint32_t));
	if (!err)
		err = cu_zero(d->cell, sizeof(struct mc_cell));
	if (!err)
		err = make_outputs(d);
	own_leave(d, o);
	if (err) {
		/* the driver's objects stay: the context may be dying; the
		 * log stays registered with them */
		free(d);
		return err;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->max_slots = max_slots;
	*out = d;
	return 0;
}

void mc_dev_free(struct mc_dev *d)
{
	struct own o;
	CUdeviceptr bufs[5];

	if (!d)
		return;
	o = own_enter(d);
	bufs[0] = d->cell, bufs[1] = d->states, bufs[2] = d->counts;
	bufs[3] = d->hints, bufs[4] = d->cur;
	for (size_t i = 0; i < ARRAY_SIZE(bufs); i++)
		if (bufs[i])
			cu()->cuMemFree(bufs[i]);
	for (size_t i = 0; i < d->nold; i++)
		cu()->cuMemFree(d->old[i]);
	cu()->cuMemHostUnregister(d->log);
	cu()->cuStreamDestroy(d->s);
	own_leave(d, o);
	pthread_mutex_destroy(&d->lock);
	free(d->old);
	free(d->log);
	free(d);
}

bool mc_dev_capturing(const struct mc_dev *d, void *stream)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	struct own o = own_enter(d);

	if (cu()->cuStreamIsCapturing(stream, &st))
		st = CU_STREAM_CAPTURE_STATUS_NONE;
	own_leave(d, o);
	return st != CU_STREAM_CAPTURE_STATUS_NONE;
}

struct mc_backend mc_dev_backend(struct mc_dev *d)
{
	return (struct mc_backend){ .user = d, .publish = publish,
				    .set_state = set_state, .set_tag = set_tag,
				    .host_fn = host_fn,
				    .quiesce = quiesce,
				    .max_slots = d->max_slots };
}

uint64_t mc_dev_cell(const struct mc_dev *d)
{
	return d->cell;
}

uint64_t mc_dev_states(const struct mc_dev *d)
{
	return d->states;
}

uint64_t mc_dev_counts(const struct mc_dev *d)
{
	return d->counts;
}

uint64_t mc_dev_log(const struct mc_dev *d)
{
	return d->log_dev;
}

uint64_t mc_dev_hints(const struct mc_dev *d)
{
	return d->hints;
}

const struct mc_log_rec *mc_dev_log_host(const struct mc_dev *d)
{
	return d->log;
}

int mc_dev_site_count(struct mc_dev *d, uint32_t site, uint32_t *count)
{
	uint32_t k = site < MC_MAX_SITES ? site : MC_MAX_SITES - 1;
	struct own o = own_enter(d);
	CUresult res = cu()->cuMemcpyDtoHAsync(count, d->counts +
					       offsetof(struct mc_counts, counts) +
					       (CUdeviceptr)k * sizeof(*count),
					       sizeof(*count), d->s);

	if (!res)
		res = cu()->cuStreamSynchronize(d->s);
	own_leave(d, o);
	return res;
}

int mc_dev_taken(struct mc_dev *d, uint32_t *next)
{
	struct own o = own_enter(d);
	CUresult res = cu()->cuMemcpyDtoHAsync(next, d->counts, sizeof(*next),
					       d->s);

	if (!res)
		res = cu()->cuStreamSynchronize(d->s);
	own_leave(d, o);
	return res;
}
