/* SPDX-License-Identifier: MIT */
/*
 * The table's backend on the GPU (memcheck_dev.h). Synchronous writes go
 * on a private non-blocking stream and are waited for there: never on the
 * legacy stream, which would wait for an application stream that may be
 * blocked in the table's host function. Stream-ordered state writes are
 * cuStreamWriteValue32 on the application's stream (captured into graphs
 * like any other work).
 */
#include <pthread.h>
#include <stdlib.h>

#include "attach/attach.h"
#include "attach/memcheck_dev.h"
#include "core/core.h"
#include "cuda/cu.h"

struct mc_dev {
	CUstream s;
	CUdeviceptr cell, states, cur;
	uint32_t max_slots;
	pthread_mutex_t lock; /* old */
	CUdeviceptr *old;     /* indexes published before cur */
	size_t nold, old_cap;
};

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
	bool was = agent_enter();
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
	agent_leave(was);
	return res;
}

static int set_state(void *user, uint32_t slot, uint32_t v, void *stream)
{
	struct mc_dev *d = user;
	CUdeviceptr at = d->states + (CUdeviceptr)slot * sizeof(v);
	bool was = agent_enter();
	CUresult res = stream ? cu()->cuStreamWriteValue32(stream, at, v, 0)
			      : put(d, at, &v, sizeof(v));

	agent_leave(was);
	return res;
}

static int host_fn(void *user, void *stream, void (*fn)(void *), void *arg)
{
	bool was = agent_enter();
	CUresult res = cu()->cuLaunchHostFunc(stream, fn, arg);

	(void)user;
	agent_leave(was);
	return res;
}

static int quiesce(void *user)
{
	bool was = agent_enter();
	CUresult res = cu()->cuCtxSynchronize();

	agent_leave(was);
	if (!res)
		mc_dev_reclaim(user);
	return res;
}

void mc_dev_reclaim(struct mc_dev *d)
{
	bool was = agent_enter();

	pthread_mutex_lock(&d->lock);
	for (size_t i = 0; i < d->nold; i++)
		cu()->cuMemFree(d->old[i]);
	d->nold = 0;
	pthread_mutex_unlock(&d->lock);
	agent_leave(was);
}

int mc_dev_new(uint32_t max_slots, struct mc_dev **out)
{
	struct mc_dev *d = calloc(1, sizeof(*d));
	bool was = agent_enter();
	int err = d ? 0 : err_set(EGPU_ENOMEM, "memcheck: no memory");

	if (!err && !cu())
		err = egpu_errcode(); /* no driver or no GPU, said why */

	if (!err)
		err = cu_check(cu()->cuStreamCreate(&d->s, CU_STREAM_NON_BLOCKING),
			       "memcheck: its stream");
	if (!err)
		err = cu_check(cu()->cuMemAlloc(&d->cell, sizeof(CUdeviceptr)),
			       "memcheck: the index cell");
	if (!err)
		err = cu_check(cu()->cuMemAlloc(&d->states,
						(size_t)max_slots * sizeof(uint32_t)),
			       "memcheck: the state array");
	if (!err)
		err = cu_zero(d->states, (size_t)max_slots * sizeof(uint32_t));
	if (!err)
		err = cu_zero(d->cell, sizeof(CUdeviceptr));
	agent_leave(was);
	if (err) {
		free(d); /* the driver's objects stay: the context may be dying */
		return err;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->max_slots = max_slots;
	*out = d;
	return 0;
}

struct mc_backend mc_dev_backend(struct mc_dev *d)
{
	return (struct mc_backend){ .user = d, .publish = publish,
				    .set_state = set_state, .host_fn = host_fn,
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
