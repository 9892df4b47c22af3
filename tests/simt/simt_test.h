/* SPDX-License-Identifier: MIT */
/* What simt_exit.bpf.c records per lane, for test_simt_gpu.c. */
#ifndef SIMT_TEST_H
#define SIMT_TEST_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* 2 blocks of 80 threads: warps of 32, 32 and 16 lanes. */
#define SIMT_BLOCK 80
#define SIMT_GRID 2
#define SIMT_THREADS (SIMT_BLOCK * SIMT_GRID)

struct simt_lane {
	__u64 mask, ticket, fetched, ballot, match, shfl, slept, lane;
	/* fetching atomics with a different operand per lane (simt_val) */
	__u64 add64, or64, xor64;
	__u32 add32, and32;
};

/* What the atomics of simt_exit.bpf.c act on. */
struct simt_atomics {
	__u64 add64, or64, xor64, plain64;
	__u32 add32, and32;
};

/* Thread @t's (lane @lane's) operand: different in every lane, 64 bits. */
#define SIMT_VAL(t, lane) ((__u64)((t) + 1) * 0x9e3779b97f4a7c15ull ^ (lane))

#endif
