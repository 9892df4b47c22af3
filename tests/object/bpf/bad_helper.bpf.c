/* SPDX-License-Identifier: MIT */
/* Calls a helper number no one defines. */
#include <egpu/bpf_helpers.h>

static long (*no_such_helper)(void) = (void *)9999;

GPU_ENTRY("k") int p(void)
{
	return no_such_helper();
}
