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
};

#endif
