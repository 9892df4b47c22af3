/* SPDX-License-Identifier: MIT */
/*
 * A traced kernel's register cap (docs/events.md, "Registers: the plain
 * kernel's occupancy"). The trace keeps three registers a lane and its
 * sites need a few more, and ptxas, left free, takes more still: SGEMM's
 * tiled kernel went from 32 to 48, so that an SM held one of its
 * 1,024-thread blocks instead of two, and spent its barriers with nothing
 * else to run. Capped at the plain kernel's count it fits in 32 without a
 * spill. So a kernel is capped at the most registers that keep the plain
 * kernel's blocks per SM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/memplan.h"

/* How a cap is written: ".maxnreg N" CAP_MARK, found again by
 * ptx_trace_caps_lower. */
#define CAP_DIRECTIVE ".maxnreg "
#define CAP_MARK " // egpu trace\n"

/* Registers are allocated to a warp in units of 256: 8 a thread. */
#define REG_GRANULE 8

static uint32_t granules(uint32_t regs)
{
	return (regs + REG_GRANULE - 1) / REG_GRANULE * REG_GRANULE;
}

/* Blocks of @threads an SM holds at @regs a thread (registers, threads). */
static uint32_t blocks_at(uint32_t regs, uint32_t threads, uint32_t sm_regs,
			  uint32_t sm_threads)
{
	uint32_t warps = (threads + 31) / 32;
	uint32_t by_regs = sm_regs / (granules(regs) * 32 * warps);
	uint32_t by_threads = sm_threads / (warps * 32);

	return by_regs < by_threads ? by_regs : by_threads;
}

uint32_t ptx_trace_reg_cap(uint32_t plain, uint32_t threads,
			   uint32_t sm_regs, uint32_t sm_threads,
			   uint32_t floor)
{
	uint32_t cap = granules(plain);

	if (threads && sm_regs && sm_threads) {
		uint32_t blocks = blocks_at(plain, threads, sm_regs, sm_threads);

		while (blocks && cap + REG_GRANULE <= granules(PTX_REGS_MAX) &&
		       blocks_at(cap + REG_GRANULE, threads, sm_regs,
				 sm_threads) >= blocks)
			cap += REG_GRANULE;
	}
	if (cap < floor)
		cap = floor;
	return cap < PTX_REGS_MAX ? cap : PTX_REGS_MAX;
}

/*
 * The token of directive @name (".maxnreg", ...) between kernel @f's
 * parameters and its body; 0 where it has none (token 0 opens the
 * module, never a kernel's header).
 */
static uint32_t header_directive(const struct ptx_module *m,
				 const struct ptx_func *f, const char *name)
{
	uint32_t t = f->body;

	while (t-- > 0 && !tok_is(m, t, ")"))
		if (tok_is(m, t, name))
			return t;
	return 0;
}

/*
 * The threads a block of kernel @f has at most, from its .maxntid or
 * .reqntid (up to three sizes); 0 where it declares neither.
 */
static uint32_t declared_threads(const struct ptx_module *m,
				 const struct ptx_func *f)
{
	uint32_t t = header_directive(m, f, ".maxntid"), n = 1;

	if (!t && !(t = header_directive(m, f, ".reqntid")))
		return 0;
	for (uint32_t d = t + 1; d < f->body; d += 2) {
		n *= (uint32_t)strtoul(tok_text(m, d), NULL, 0);
		if (!tok_is(m, d + 1, ","))
			break;
	}
	return n;
}

/* The cap of traced kernel @item: 0 none (ptx_trace.max_registers). */
static int cap_of(const struct ptx_module *m, uint32_t item,
		  const struct ptx_trace *tr, uint32_t *cap)
{
	const struct ptx_func *f = m->items[item].func;
	uint32_t name = m->items[item].name;
	uint32_t plain;
	char *s;

	*cap = tr->max_registers;
	if (*cap || !tr->plain_regs)
		return 0;
	s = strndup(tok_text(m, name), m->toks[name].len);
	if (!s)
		return err_set(EGPU_ENOMEM, "PTX: out of memory for a kernel's name");
	plain = tr->plain_regs(tr->plain_user, s);
	free(s);
	if (plain)
		*cap = ptx_trace_reg_cap(plain, declared_threads(m, f),
					 tr->sm_regs, tr->sm_threads,
					 tr->reg_floor);
	return 0;
}

int tr_cap_registers(const struct ptx_module *m, uint32_t item,
		     const struct ptx_trace *tr, struct edits *e)
{
	const struct ptx_func *f = m->items[item].func;
	struct strbuf *sb;
	uint32_t cap;
	int err;

	if (header_directive(m, f, ".maxnreg")) /* a limit of its own */
		return 0;
	err = cap_of(m, item, tr, &cap);
	if (err || !cap)
		return err;
	sb = edit_at(e, m->toks[f->body].off, 0);
	if (!sb)
		return err_set(EGPU_ENOMEM, "PTX: out of memory for edits");
	sb_printf(sb, CAP_DIRECTIVE "%u" CAP_MARK, cap);
	return 0;
}

void ptx_trace_caps_lower(char *ptx, uint32_t max)
{
	char *at = ptx;

	while (max && (at = strstr(at, CAP_DIRECTIVE))) {
		char *end, num[16];
		unsigned long n;
		int len;

		at += strlen(CAP_DIRECTIVE);
		n = strtoul(at, &end, 10);
		if (end == at || strncmp(end, CAP_MARK, strlen(CAP_MARK)) ||
		    n <= max)
			continue;
		/* as many digits or fewer: the rest padded, nothing moves */
		len = snprintf(num, sizeof(num), "%u", max);
		memcpy(at, num, (size_t)len);
		memset(at + len, ' ', (size_t)(end - at - len));
	}
}
