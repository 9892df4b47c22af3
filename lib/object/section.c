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
 * attachable but can be run directly. Memory probes may go on to choose
 * state spaces and access kinds: gpu/mem/K/global,shared/load,store.
 *
 * Host probes take libbpf's and bpftime's uprobe forms: uprobe/PATH:FUNC,
 * uretprobe/PATH:FUNC (PATH, which may hold ':' itself, is not needed: egpu
 * attach reaches the CUDA API wherever it is linked from), uprobe/FUNC,
 * and plain uprobe / uretprobe, whose function is given at attach time
 * (egpu attach --uprobe PROG=FUNC). Their "kernel" is the function.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "egpu/ctx.h"
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
	/* gpu/mem/K/SPACES/KINDS: the kernel ends at the first '/'. */
	size_t n = at == EGPU_ATTACH_MEM ? strcspn(pattern, "/") : strlen(pattern);

	*kernel = strndup(pattern, n);
	if (!*kernel)
		return err_set(EGPU_ENOMEM, "out of memory");
	return at;
}

static const char *const space_names[] = {
	[EGPU_SPACE_GENERIC] = "generic", [EGPU_SPACE_GLOBAL] = "global",
	[EGPU_SPACE_SHARED] = "shared",   [EGPU_SPACE_LOCAL] = "local",
	[EGPU_SPACE_CONST] = "const",     [EGPU_SPACE_PARAM] = "param",
};
static const char *const kind_names[] = {
	[EGPU_MEM_LOAD] = "load",     [EGPU_MEM_STORE] = "store",
	[EGPU_MEM_ATOMIC] = "atomic", [EGPU_MEM_ASYNC] = "async",
};

/* The mask of the comma-separated names in [@s, @e) ("*": 0, all). */
static int name_mask(const char *section, const char *s, const char *e,
		     const char *const *names, size_t n, const char *what,
		     uint32_t *mask)
{
	*mask = 0;
	if (e - s == 1 && *s == '*')
		return 0;
	while (s < e) {
		size_t len = strcspn(s, ",/");
		size_t i;

		for (i = 0; i < n; i++)
			if (names[i] && strlen(names[i]) == len && !strncmp(s, names[i], len))
				break;
		if (i == n)
			return err_set(EGPU_EFORMAT,
				       "section '%s': '%.*s' is no %s (%s)", section,
				       (int)len, s, what,
				       names == space_names ?
				       "generic, global, shared, local, const, param or *" :
				       "load, store, atomic, async or *");
		*mask |= 1u << i;
		s += len + (s[len] == ',');
	}
	return 0;
}

int object_mem_filter_from_section(const char *section, uint32_t *spaces,
				   uint32_t *kinds)
{
	const char *k = !strncmp(section, "gpu/mem/", 8) ? section + 8 : NULL;
	const char *sp = k ? strchr(k, '/') : NULL;
	const char *kd = sp ? strchr(sp + 1, '/') : NULL;
	int err;

	*spaces = *kinds = 0;
	if (!sp)
		return 0;
	err = name_mask(section, sp + 1, kd ? kd : sp + strlen(sp),
			space_names, ARRAY_SIZE(space_names), "state space", spaces);
	if (!err && kd)
		err = name_mask(section, kd + 1, kd + strlen(kd), kind_names,
				ARRAY_SIZE(kind_names), "access kind", kinds);
	return err;
}

static const char *kernel_pattern(const char *k)
{
	return !strncmp(k, "cuda__Z", 7) ? k + 5 : k;
}

/* Whether @section is uprobe[/[PATH:]FUNC] or uretprobe[...]; if so *at
 * gets the attach point, or an error. */
static bool host_attach(const char *section, char **func, int *at)
{
	static const struct section_rule host[] = {
		{ "uprobe", EGPU_ATTACH_UPROBE },
		{ "uretprobe", EGPU_ATTACH_URETPROBE },
	};

	for (size_t i = 0; i < ARRAY_SIZE(host); i++) {
		size_t n = strlen(host[i].prefix);
		const char *f = section + n, *colon;

		if (strncmp(section, host[i].prefix, n) || (*f && *f != '/'))
			continue;
		f += *f == '/';
		colon = strrchr(f, ':');
		f = colon ? colon + 1 : f;
		*at = strchr(f, '+') ?
		      err_set(EGPU_EFORMAT,
			      "section '%s': an offset into the function; host probes attach at its entry (uprobe) or return (uretprobe)",
			      section) :
		      attach_to(f, host[i].at, func);
		return true;
	}
	return false;
}

int object_attach_from_section(const char *section, char **kernel)
{
	int at;

	*kernel = NULL;
	if (host_attach(section, kernel, &at))
		return at;
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
