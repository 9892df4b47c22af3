/* SPDX-License-Identifier: MIT */
/*
 * The GPU targets there are, and the PTX ISA each first appeared in. The
 * JIT makes code for the newest its LLVM knows and gives later targets
 * their own .target and .version lines (jit_ptx.c).
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "target.h"

static const struct {
	unsigned sm, ptx_isa;
} targets[] = {
	{ 30, 30 }, { 32, 40 }, { 35, 31 }, { 37, 41 }, { 50, 40 },
	{ 52, 41 }, { 53, 42 }, { 60, 50 }, { 61, 50 }, { 62, 50 },
	{ 70, 60 }, { 72, 61 }, { 75, 63 }, { 80, 70 }, { 86, 71 },
	{ 87, 74 }, { 89, 78 }, { 90, 78 }, { 100, 86 }, { 103, 88 },
	{ 110, 90 }, { 120, 87 }, { 121, 88 }, /* sm_101: sm_110 since CUDA 13 */
};

#define TARGET_CNT (sizeof(targets) / sizeof(targets[0]))

/* 'a' needs the target's PTX ISA (8.0 for sm_90a), 'f' 8.8. */
static unsigned suffix_isa(char suffix, unsigned isa)
{
	if (suffix == 'f')
		return isa > 88 ? isa : 88;
	if (suffix == 'a')
		return isa > 80 ? isa : 80;
	return isa;
}

static int unknown(const char *who, const char *text)
{
	struct strbuf known;

	sb_init(&known);
	for (size_t i = 0; i < TARGET_CNT; i++)
		sb_printf(&known, "%ssm_%u", i ? " " : "", targets[i].sm);
	err_set(EGPU_EINVAL, "%s: '%.20s' is not a GPU target (known: %s; an 'a' or 'f' suffix may follow)",
		who, text, sb_ok(&known) ? known.buf : "sm_30 ... sm_121");
	sb_free(&known);
	return EGPU_EINVAL;
}

int target_parse(const char *who, const char *text, struct gpu_target *t)
{
	const char *p = text ? text + 3 : NULL;
	unsigned sm = 0;
	size_t digits = 0;

	if (!text || strncmp(text, "sm_", 3))
		return err_set(EGPU_EINVAL, "%s: invalid GPU target '%s' (want sm_NN, e.g. sm_90)",
			       who, text ? text : "(null)");
	for (; *p >= '0' && *p <= '9' && digits < 4; p++, digits++)
		sm = sm * 10 + (unsigned)(*p - '0');
	if (digits && digits < 4 && (!*p || ((*p == 'a' || *p == 'f') && !p[1])))
		for (size_t i = 0; i < TARGET_CNT; i++)
			if (targets[i].sm == sm) {
				t->sm = sm;
				t->suffix = *p;
				t->ptx_isa = suffix_isa(*p, targets[i].ptx_isa);
				return 0;
			}
	return unknown(who, text);
}

unsigned target_sm(const char *name)
{
	unsigned long v;
	char *end;

	if (!name || strncmp(name, "sm_", 3))
		return 0;
	v = strtoul(name + 3, &end, 10);
	return end == name + 3 || v > 9999 ? 0 : (unsigned)v;
}
