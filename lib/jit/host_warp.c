/* SPDX-License-Identifier: MIT */
/*
 * A warp of 32 lanes on the CPU, for checking warp-level code: each lane
 * of a call is a thread running the translated program, and every warp
 * primitive (warp_agg.h) is a rendezvous of the lanes still running, which
 * then compute its result from what each contributed, as PTX defines it.
 * Lanes that return leave the warp, as exited GPU threads do. A primitive
 * used against PTX's rules (a mask without the calling lane, a shuffle
 * from a lane outside the mask) makes the whole call fail.
 *
 * The model is lock-step: every running lane meets every primitive, so
 * programs must reach the same sequence of primitives in all lanes, which
 * holds for code that diverges only by returning early.
 */
#include <pthread.h>
#include <string.h>

#include "host_warp.h"
#include "warp_agg.h"

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint32_t live;    /* lanes still running */
	uint32_t arrived; /* lanes waiting at the current rendezvous */
	uint32_t met;     /* the lanes of the last rendezvous */
	unsigned gen;
	uint64_t in[32];
	bool broken;      /* a primitive broke PTX's rules */
} w = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* One warp at a time. */
static pthread_mutex_t warp_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local uint32_t my_lane;

static void release(void)
{
	w.met = w.arrived;
	w.arrived = 0;
	w.gen++;
	pthread_cond_broadcast(&w.cv);
}

/* With w.mu held: wait until every running lane arrived. */
static void rendezvous(void)
{
	unsigned gen = w.gen;

	w.arrived |= 1u << my_lane;
	if (w.arrived == w.live) {
		release();
		return;
	}
	while (gen == w.gen)
		pthread_cond_wait(&w.cv, &w.mu);
}

/* Every running lane's @v into @all; the lanes that met, returned. */
static uint32_t exchange(uint64_t v, uint64_t all[32])
{
	uint32_t met;

	pthread_mutex_lock(&w.mu);
	w.in[my_lane] = v;
	rendezvous();
	memcpy(all, w.in, sizeof(w.in));
	met = w.met;
	rendezvous(); /* nobody writes w.in before all have read it */
	pthread_mutex_unlock(&w.mu);
	return met;
}

/* @ok, or the call breaks PTX's rules. */
static void require(bool ok)
{
	if (ok)
		return;
	pthread_mutex_lock(&w.mu);
	w.broken = true;
	pthread_mutex_unlock(&w.mu);
}

/* @mask must name this lane and only lanes that met. */
static void check_mask(uint32_t mask, uint32_t met)
{
	require((mask >> my_lane & 1) && !(mask & ~met));
}

static uint32_t sim_active_mask(void)
{
	uint64_t all[32];

	return exchange(0, all);
}

static uint32_t sim_lane(void)
{
	return my_lane;
}

static uint32_t sim_match(uint32_t mask, uint64_t v)
{
	uint64_t all[32];
	uint32_t met = exchange(v, all), out = 0;

	check_mask(mask, met);
	for (int i = 0; i < 32; i++)
		if ((mask >> i & 1) && all[i] == v)
			out |= 1u << i;
	return out;
}

static uint32_t sim_vote_all(uint32_t mask, uint32_t pred)
{
	uint64_t all[32];
	uint32_t met = exchange(pred & 1, all);

	check_mask(mask, met);
	for (int i = 0; i < 32; i++)
		if ((mask >> i & 1) && !all[i])
			return 0;
	return 1;
}

static uint64_t sim_shfl(uint64_t v, uint32_t src, uint32_t mask)
{
	uint64_t all[32];
	uint32_t met = exchange(v, all);

	check_mask(mask, met);
	require(mask >> (src & 31) & 1); /* a lane outside: undefined */
	return all[src & 31];
}

static uint32_t sim_redux(uint32_t op, uint32_t v, uint32_t mask)
{
	uint64_t all[32];
	uint32_t met = exchange(v, all);
	uint32_t out = op == LLVMAtomicRMWBinOpAnd ? UINT32_MAX : 0;

	check_mask(mask, met);
	for (int i = 0; i < 32; i++) {
		uint32_t x = (uint32_t)all[i];

		if (!(mask >> i & 1))
			continue;
		if (op == LLVMAtomicRMWBinOpAdd)
			out += x;
		else if (op == LLVMAtomicRMWBinOpOr)
			out |= x;
		else if (op == LLVMAtomicRMWBinOpAnd)
			out &= x;
		else
			out ^= x;
	}
	return out;
}

/* PTX ISA, fns: the |off|-th set bit of mask from base, up or down. */
static uint32_t sim_fns(uint32_t mask, uint32_t base, uint32_t off)
{
	int32_t o = (int32_t)off, pos = (int32_t)base, inc = o > 0 ? 1 : -1;
	int32_t count = (o < 0 ? -o : o) - 1;

	if (!o)
		return base < 32 && (mask >> base & 1) ? base : UINT32_MAX;
	for (; pos >= 0 && pos < 32; pos += inc)
		if ((mask >> pos & 1) && count-- == 0)
			return (uint32_t)pos;
	return UINT32_MAX;
}

static void sim_sync(uint32_t mask)
{
	uint64_t all[32];

	check_mask(mask, exchange(0, all));
}

const struct host_helper host_warp_calls[] = {
	{ 0, "egpu_sim_active_mask", (void (*)(void))sim_active_mask },
	{ 0, "egpu_sim_lane", (void (*)(void))sim_lane },
	{ 0, "egpu_sim_match", (void (*)(void))sim_match },
	{ 0, "egpu_sim_vote_all", (void (*)(void))sim_vote_all },
	{ 0, "egpu_sim_shfl", (void (*)(void))sim_shfl },
	{ 0, "egpu_sim_redux", (void (*)(void))sim_redux },
	{ 0, "egpu_sim_fns", (void (*)(void))sim_fns },
	{ 0, "egpu_sim_sync", (void (*)(void))sim_sync },
};
const size_t host_warp_call_cnt = ARRAY_SIZE(host_warp_calls);

/* The IR side: calls of the functions above. */
static LLVMValueRef ir_active_mask(struct lift *l)
{
	return lift_call(l, "egpu_sim_active_mask", l->i32, NULL, 0);
}

static LLVMValueRef ir_lane(struct lift *l)
{
	return lift_call(l, "egpu_sim_lane", l->i32, NULL, 0);
}

static LLVMValueRef ir_match(struct lift *l, LLVMValueRef mask, LLVMValueRef v)
{
	return lift_call(l, "egpu_sim_match", l->i32, (LLVMValueRef[]){ mask, v }, 2);
}

static LLVMValueRef ir_vote_all(struct lift *l, LLVMValueRef mask,
				LLVMValueRef pred)
{
	LLVMValueRef p = LLVMBuildZExt(l->b, pred, l->i32, "");

	p = lift_call(l, "egpu_sim_vote_all", l->i32, (LLVMValueRef[]){ mask, p }, 2);
	return LLVMBuildTrunc(l->b, p, l->i1, "");
}

static LLVMValueRef ir_shfl(struct lift *l, LLVMValueRef v, LLVMValueRef src,
			    LLVMValueRef mask)
{
	return lift_call(l, "egpu_sim_shfl", l->i64,
			 (LLVMValueRef[]){ v, src, mask }, 3);
}

static LLVMValueRef ir_redux(struct lift *l, LLVMAtomicRMWBinOp op,
			     LLVMValueRef v, LLVMValueRef mask)
{
	return lift_call(l, "egpu_sim_redux", l->i32,
			 (LLVMValueRef[]){ lift_const(l->i32, op), v, mask }, 3);
}

static LLVMValueRef ir_fns(struct lift *l, LLVMValueRef mask, LLVMValueRef base,
			   LLVMValueRef off)
{
	return lift_call(l, "egpu_sim_fns", l->i32,
			 (LLVMValueRef[]){ mask, base, off }, 3);
}

static void ir_sync(struct lift *l, LLVMValueRef mask)
{
	lift_call(l, "egpu_sim_sync", l->void_t, &mask, 1);
}

LLVMValueRef host_warp_rmw(struct lift *l, LLVMAtomicRMWBinOp op,
			   LLVMValueRef addr, LLVMValueRef val, bool fetch)
{
	struct warp_prims p = {
		.active_mask = ir_active_mask, .lane_id = ir_lane,
		.match_any = ir_match, .vote_all = ir_vote_all,
		.shfl = ir_shfl, .fns = ir_fns, .sync = ir_sync,
		.redux = l->in->warp_model == JIT_WARP_SCAN ? NULL : ir_redux,
	};

	return warp_rmw(l, &p, op, addr, val,
			fetch ? WARP_RMW_FETCH | WARP_RMW_SEQ_CST : 0);
}

void host_warp_begin(uint32_t lanes)
{
	pthread_mutex_lock(&warp_lock);
	w.live = lanes;
	w.arrived = 0;
	w.broken = false;
}

void host_warp_enter(uint32_t lane)
{
	my_lane = lane;
}

void host_warp_leave(uint32_t lanes)
{
	pthread_mutex_lock(&w.mu);
	w.live &= ~lanes;
	if (w.arrived && w.arrived == w.live)
		release();
	pthread_mutex_unlock(&w.mu);
}

bool host_warp_end(void)
{
	bool ok = !w.broken;

	pthread_mutex_unlock(&warp_lock);
	return ok;
}
