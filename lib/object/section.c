/* SPDX-License-Identifier: MIT */
/*
 * Attach points named by ELF section names: libegpu's own gpu/entry/K,
 * gpu/exit/K and gpu/mem/K, and bpftime's kprobe/K (entry), kretprobe/K
 * (exit) and kprobe/__memcapture (every memory access of every kernel).
 * K is a kernel name or glob and may not be empty ("*" means all);
 * bpftime's "cuda_" before a mangled name (kprobe/cuda__Z9vectorAddPKfS0_Pf,
 * its spelling for probes loaded next to kernel eBPF) is dropped, and
 * kprobe/__directly_run marks bpftime's programs that run directly. Any
 * other section ("socket", "xdp", ".text") loads a program that is not
 * attachable but can be run directly.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "object/object.h"

struct section_rule {
	const char *prefix;
	enum egpu_attach_point at;
};

static const struct section_rule rules[] = {
	{ "gpu/entry/", EGPU_ATTACH_ENTRY },
	{ "gpu/exit/", EGPU_ATTACH_EXIT },
	{ "gpu/mem/", EGPU_ATTACH_MEM },
	{ "kprobe/", EGPU_ATTACH_ENTRY },
	{ "kretprobe/", EGPU_ATTACH_EXIT },
};

static int attach_to(const char *pattern, enum egpu_attach_point at,
		     char **kernel)
{
	*kernel = strdup(pattern);
	if (!*kernel)
		return err_set(EGPU_ENOMEM, "out of memory");
	return at;
}

static const char *kernel_pattern(const char *k)
{
	return !strncmp(k, "cuda__Z", 7) ? k + 5 : k;
}

int object_attach_from_section(const char *section, char **kernel)
{
	*kernel = NULL;
	if (!strcmp(section, "kprobe/__memcapture"))
		return attach_to("*", EGPU_ATTACH_MEM, kernel);
	if (!strcmp(section, "kprobe/__directly_run"))
		return attach_to("", EGPU_ATTACH_NONE, kernel);
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		size_t n = strlen(rules[i].prefix);

		if (strncmp(section, rules[i].prefix, n))
			continue;
		if (!section[n])
			return err_set(EGPU_EFORMAT,
				       "section '%s' names no kernel (use '%s*' for every kernel)",
				       section, rules[i].prefix);
		return attach_to(kernel_pattern(section + n), rules[i].at,
				 kernel);
	}
	if (!strncmp(section, "gpu/", 4))
		return err_set(EGPU_EFORMAT,
			       "section '%s': unknown attach point (expected gpu/entry/K, gpu/exit/K or gpu/mem/K)",
			       section);
	return attach_to("", EGPU_ATTACH_NONE, kernel);
}
