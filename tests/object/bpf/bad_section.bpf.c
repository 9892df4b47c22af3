/* SPDX-License-Identifier: MIT */
/* A gpu/ section with no kernel name. */
#include <egpu/bpf_helpers.h>

SEC("gpu/entry/") int nameless(void)
{
	return 0;
}
