/* SPDX-License-Identifier: MIT */
/*
 * The clock calibration kernel (docs/clock.md): one thread answers the
 * host's pings through mapped host memory with the %globaltimer value it
 * read after seeing each one. Every wait is bounded twice, by the GPU's
 * timer and by a count of polls (should the timer stand still), so the
 * kernel ends whatever the host does. Built to a fatbin and embedded (see
 * CMakeLists.txt); not linked into instrumented modules.
 */
#include "device/clock_sync.h"

/* Reads of the timer spent looking for its step, at most. */
#define STEP_READS_MAX (1ull << 22)
/* Polls of the mailbox while waiting for one ping, at most (a poll crosses
 * PCIe: about a microsecond, so this is well past any idle timeout). */
#define PING_POLLS_MAX (1ull << 26)

static __device__ __forceinline__ uint64_t globaltimer(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : : "memory");
	return t;
}

/*
 * The largest step between successive values of the timer over
 * CLOCK_STEP_SAMPLES updates (the first change ends a partial step and does
 * not count), or 0 if the timer does not move.
 */
static __device__ uint64_t timer_step(void)
{
	uint64_t prev = globaltimer(), step = 0;
	unsigned changes = 0;

	#pragma unroll 1
	for (uint64_t reads = 0; reads < STEP_READS_MAX; reads++) {
		uint64_t t = globaltimer();

		if (t == prev)
			continue;
		if (changes++ && t - prev > step)
			step = t - prev;
		prev = t;
		if (changes > CLOCK_STEP_SAMPLES)
			return step;
	}
	return 0;
}

/* The next ping (a value other than @last), or CLOCK_PING_STOP when none
 * came within @timeout_ns. */
static __device__ uint64_t wait_ping(const struct clock_mailbox *mb,
				     uint64_t last, uint64_t timeout_ns)
{
	uint64_t start = globaltimer();

	#pragma unroll 1
	for (uint64_t polls = 0; polls < PING_POLLS_MAX; polls++) {
		uint64_t ping = mb->ping;

		if (ping != last)
			return ping;
		if (globaltimer() - start > timeout_ns)
			break;
	}
	return CLOCK_PING_STOP;
}

extern "C" __global__ void egpu_clock_sync_kernel(struct clock_mailbox *mb,
						  uint64_t idle_timeout_ns,
						  uint64_t max_rounds)
{
	uint64_t seen = 0;

	mb->step_ns = timer_step();
	__threadfence_system();
	mb->state = CLOCK_STATE_RUNNING;
	#pragma unroll 1
	for (uint64_t round = 0; round < max_rounds; round++) {
		uint64_t ping = wait_ping(mb, seen, idle_timeout_ns);

		if (ping == CLOCK_PING_STOP)
			break;
		/* Read after the ping was seen: the branch above waits for it. */
		mb->gpu_ns = globaltimer();
		__threadfence_system();
		mb->pong = ping;
		seen = ping;
	}
	__threadfence_system();
	mb->state = CLOCK_STATE_DONE;
}
