/* SPDX-License-Identifier: MIT */
/*
 * jit_host_call_warp(): a translated program run as one warp on the CPU's
 * warp model (host_warp.c), a thread per lane.
 */
#include <pthread.h>

#include "host_warp.h"
#include "jit.h"

struct lane_run {
	const struct jit_host *jh;
	void *ctx;
	uint64_t ctx_len, r0;
	uint32_t lane;
};

static void *lane_main(void *arg)
{
	struct lane_run *r = arg;

	host_warp_enter(r->lane);
	r->r0 = jit_host_call(r->jh, r->ctx, r->ctx_len);
	host_warp_leave(1u << r->lane);
	return NULL;
}

int jit_host_call_warp(const struct jit_host *jh, void *const ctx[32],
		       uint64_t ctx_len, uint32_t lanes, uint64_t r0[32])
{
	struct lane_run runs[32];
	pthread_t threads[32];
	uint32_t started = 0;
	int err = 0;

	host_warp_begin(lanes);
	for (uint32_t i = 0; i < 32; i++) {
		if (!(lanes >> i & 1))
			continue;
		runs[i] = (struct lane_run){ jh, ctx[i], ctx_len, 0, i };
		if (pthread_create(&threads[i], NULL, lane_main, &runs[i])) {
			/* the lanes started must not wait for these */
			host_warp_leave(lanes & ~started);
			err = err_set(EGPU_ENOMEM, "warp model: cannot start lane %u", i);
			break;
		}
		started |= 1u << i;
	}
	for (uint32_t i = 0; i < 32; i++) {
		if (!(started >> i & 1))
			continue;
		pthread_join(threads[i], NULL);
		r0[i] = runs[i].r0;
	}
	if (!host_warp_end() && !err)
		err = err_set(EGPU_EINVAL, "warp model: a warp primitive was used against PTX's rules (a mask without the calling lane, or naming a lane not running)");
	return err;
}
