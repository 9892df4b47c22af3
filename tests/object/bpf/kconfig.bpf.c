/* SPDX-License-Identifier: MIT */
/* An extern .kconfig variable: host kernel configuration, none on a GPU. */
#include <egpu/bpf_helpers.h>

extern unsigned int LINUX_KERNEL_VERSION __attribute__((section(".kconfig")));

GPU_ENTRY("k") int p(void)
{
	return LINUX_KERNEL_VERSION;
}
