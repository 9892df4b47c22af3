/* SPDX-License-Identifier: MIT */
#ifndef EGPU_TEST_MAPS_DOUBLE_H
#define EGPU_TEST_MAPS_DOUBLE_H

#include <stdint.h>

#define FAKE_MAP_MAX 8

struct fake_map {
	int n;
	int lookups;
	uint32_t keys[FAKE_MAP_MAX];
	uint64_t values[FAKE_MAP_MAX];
};

#endif
