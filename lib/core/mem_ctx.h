/* SPDX-License-Identifier: MIT */
/*
 * The ctx a memory site gives its probes on the GPU: struct egpu_mem_ctx,
 * then a tail that only bpf_egpu_read_value's GPU lowering reads
 * (lib/jit/lift_helper.c); programs see the public 48 bytes (the
 * verifier's ctx) and r2 = sizeof(struct egpu_mem_ctx).
 *
 * A store of at most 8 bytes whose operand is one register or constant
 * passes those bytes in value_bits (value_len = their count): a probe
 * copied into the site reads them from a register, with no copy of the
 * value in local memory. Otherwise value_len is 0 and the lowering reads
 * the bytes at value_at (ctx.value; a separate field so that only probes
 * that read ctx.value themselves make a site copy the value there).
 * Every GPU caller of a memory probe supplies the tail: sites
 * (lib/ptx/memsite.c) and direct runs (lib/api/run_gpu.c).
 */
#ifndef EGPU_CORE_MEM_CTX_H
#define EGPU_CORE_MEM_CTX_H

#include <stddef.h>
#include <stdint.h>

#include "egpu/ctx.h"

struct mem_site_ctx {
	struct egpu_mem_ctx pub;
	uint64_t value_bits; /* the stored bytes, little-endian */
	uint32_t value_len;  /* bytes in value_bits; 0: read value_at */
	uint32_t pad;
	uint64_t value_at;   /* as pub.value */
};

_Static_assert(offsetof(struct mem_site_ctx, value_bits) == 48 &&
		       offsetof(struct mem_site_ctx, value_len) == 56 &&
		       offsetof(struct mem_site_ctx, value_at) == 64 &&
		       sizeof(struct mem_site_ctx) == 72,
	       "the tail follows the public ctx");

#endif
