/* SPDX-License-Identifier: MIT */
/*
 * The unwind rule of a return address on x86-64 (unwind_rule.c): where
 * the caller's stack pointer, return address and rbp are, worked out once
 * from .eh_frame and cached, for collect_unwind.c's walk.
 */
#ifndef EGPU_TRACE_UNWIND_RULE_H
#define EGPU_TRACE_UNWIND_RULE_H

#if defined(__x86_64__)

#include <stdint.h>

#include "collect_impl.h"

/* libgcc's FDE lookup: the FDE covering @pc, and the bases its pointer
 * encodings may refer to. Exported by libgcc_s (and LLVM's libunwind). */
struct eh_bases {
	void *tbase, *dbase, *func;
};
typedef const void *find_fde_fn(void *pc, struct eh_bases *bases);

enum rule_kind {
	RULE_NONE,        /* an empty cache slot */
	RULE_STEP,        /* unwind by the offsets */
	RULE_END,         /* the outermost frame: no FDE, or RA undefined */
	RULE_UNKNOWN,     /* not expressible: backtrace() does the capture */
};

/* One return address's rule, 8 bytes. */
struct rule {
	int32_t cfa_off;
	int16_t rbp_off;  /* rbp saved at CFA + rbp_off; 0: unchanged
			     (with RULE_RBP_AT_RBP: at rbp + rbp_off) */
	int8_t ra_off;    /* return address at CFA + ra_off */
	uint8_t kind;     /* enum rule_kind, | RULE_CFA_RBP */
};

_Static_assert(sizeof(struct rule) == sizeof(uint64_t), "a rule is a word");

#define RULE_KIND 3
#define RULE_CFA_RBP 4    /* the CFA is rbp + cfa_off (else rsp +) */
#define RULE_CFA_DEREF 8  /* the CFA is loaded from there */
#define RULE_RBP_AT_RBP 16

/* The rules of one trace's return addresses, shared by its threads. */
struct rule_table {
	void *libgcc;
	find_fde_fn *find_fde;
	struct lfmap rules;   /* return address -> struct rule */
};

/* 0, or -1 without libgcc's FDE lookup or memory. */
int rule_table_init(struct rule_table *t);
void rule_table_free(struct rule_table *t);
/* The rule of return address @ra, computed at its first use. */
struct rule rule_of(struct rule_table *t, uintptr_t ra);

#endif
#endif
