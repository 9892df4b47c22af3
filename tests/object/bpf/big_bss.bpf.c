/* SPDX-License-Identifier: MIT */
/* A 4000 MB zero .bss in a small object, and a .data zero but one byte. */
#include <egpu/bpf_helpers.h>

char big_bss[4000u << 20];
char nearly_zero[4096] = { [1234] = 1 };

GPU_ENTRY("k") int touch(void)
{
	return big_bss[7] + nearly_zero[1234];
}
