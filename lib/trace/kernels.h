/* SPDX-License-Identifier: MIT */
/* Kernels by name, their GPU time and call paths (kernels.c). */
#ifndef EGPU_TRACE_KERNELS_H
#define EGPU_TRACE_KERNELS_H

#include "writers.h"

/* One kernel name: its totals and its paths, the hottest first. */
struct kernel_sum {
	const char *name;
	uint64_t ns;
	uint64_t launches;
	struct path_group *paths;  /* into kernel_sums.groups */
	size_t path_cnt;
};

struct kernel_sums {
	struct kernel_sum *k;      /* by GPU time, most first; ties by name */
	size_t cnt;
	struct path_group *groups; /* (name, host path) groups */
	size_t group_cnt;
};

int kernel_sums(const struct trace_data *td, struct kernel_sums *ks);
void kernel_sums_free(struct kernel_sums *ks);
/* The path of @k with the most GPU time that a launch was joined to. */
const struct path_group *kernel_hottest(const struct trace_data *td,
					const struct kernel_sum *k);

#endif
