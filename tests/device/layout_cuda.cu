/* SPDX-License-Identifier: MIT */
/*
 * layout.h compiled as CUDA C++: its static asserts hold for nvcc's host
 * and device passes as they do for the C compiler, and the device sees the
 * descriptor as the host writes it.
 */
#include "maps/layout.h"

static_assert(alignof(struct dev_map_desc) == 8, "descriptor alignment");
static_assert(sizeof(dev_slot_state) == 4, "slot state is a 32-bit word");

__global__ void layout_probe(uint32_t *out)
{
	out[0] = (uint32_t)sizeof(struct dev_map_desc);
	out[1] = dev_slot_size(5, 12);
}
