/* SPDX-License-Identifier: MIT */
/* GPU targets ("sm_90", "sm_100a"): the one check every entry point uses. */
#ifndef EGPU_CORE_TARGET_H
#define EGPU_CORE_TARGET_H

/* A target's parts: "sm_100a" is { 100, 'a', 86 }. */
struct gpu_target {
	unsigned sm;      /* the architecture number */
	char suffix;      /* 'a' (architecture-specific), 'f' (family) or 0 */
	unsigned ptx_isa; /* the oldest PTX ISA naming it, times ten (86: 8.6) */
};

/*
 * Parse @text into @t: a GPU NVIDIA makes (sm_30 to sm_121), with an
 * optional 'a' or 'f' suffix. Anything else is EGPU_EINVAL with a message
 * starting "@who: " that lists the targets there are.
 */
int target_parse(const char *who, const char *text, struct gpu_target *t);
/* The architecture number of a target name ("sm_90a": 90), unchecked
 * (names from ptxas command lines and PTX too); 0 for anything else. */
unsigned target_sm(const char *name);

#endif
