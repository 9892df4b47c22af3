// SPDX-License-Identifier: MIT
/*
 * The allocation table's lookup on the GPU, read as the probe reads it:
 * the current index through the cell, then mc_check (memcheck_layout.h,
 * the same source the CPU tests run). One thread per query; -1 when no
 * index is published yet.
 */
#include "core/memcheck_layout.h"

extern "C" __global__ void mc_lookup(const unsigned long long *cell,
				     const uint32_t *states,
				     const unsigned long long *addrs,
				     const uint32_t *sizes, int *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	const struct mc_index_hdr *h;

	if (i >= n)
		return;
	h = (const struct mc_index_hdr *)*(volatile const unsigned long long *)cell;
	out[i] = h ? mc_check(h, states, addrs[i], sizes[i]) : -1;
}
