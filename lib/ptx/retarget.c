/* SPDX-License-Identifier: MIT */
/*
 * Retargeting an application module written for an older GPU than the
 * probes can be made for. XLA, for one, ships small PTX modules for sm_50
 * that the driver compiles for whatever GPU runs them; the probes link
 * only into a module whose .target is theirs or newer, and the device
 * runtime's floor is sm_75. Raising such a module's .target to the
 * context's GPU changes nothing the driver makes of it, unless the module
 * uses an instruction the newer target removed: shfl and vote without
 * .sync exist only below sm_70 (PTX ISA, "Warp Vote and Shuffle").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/target.h"
#include "ptx/module.h"
#include "ptx/ptx.h"

/* The first PTX ISA version that accepts .target sm_@sm (core/target.c);
 * 7.8 for one it does not know. */
static void target_isa(unsigned sm, unsigned *major, unsigned *minor)
{
	struct gpu_target t = { .ptx_isa = 78 };
	char name[16];

	snprintf(name, sizeof(name), "sm_%u", sm);
	if (target_parse("retarget", name, &t))
		err_clear();
	*major = t.ptx_isa / 10;
	*minor = t.ptx_isa % 10;
}

/* shfl or vote without .sync: gone from sm_70 on. */
static bool removed_insn(const struct ptx_module *m, const struct ptx_stmt *st)
{
	uint32_t t;

	if (!tok_is(m, st->op, "shfl") && !tok_is(m, st->op, "vote"))
		return false;
	for (t = st->op + 1; t < st->last && m->toks[t].kind == TOK_DIR; t++)
		if (tok_is(m, t, ".sync"))
			return false;
	return true;
}

static int find_removed(const struct ptx_module *m, const struct ptx_func *f)
{
	for (uint32_t i = 0; i < f->nstmts; i++) {
		const struct ptx_stmt *st = &f->stmts[i];

		if (st->kind == ST_INSN && removed_insn(m, st))
			return err_set(EGPU_ENOTSUP,
				       "PTX line %u: '%.*s' without .sync does not exist on sm_70 and later, so the module cannot be retargeted",
				       m->toks[st->op].line, (int)m->toks[st->op].len,
				       tok_text(m, st->op));
	}
	return 0;
}

static int check_retargetable(const struct ptx_module *m)
{
	int err = 0;

	for (uint32_t i = 0; i < m->nitems && !err; i++)
		if (m->items[i].kind == IT_FUNC && m->items[i].func->defined)
			err = find_removed(m, m->items[i].func);
	return err;
}

static uint32_t target_token(const struct ptx_module *m)
{
	for (uint32_t i = 0; i < m->nitems; i++)
		if (m->items[i].kind == IT_TARGET)
			return m->items[i].first + 1;
	return 0;
}

static bool version_below(const struct ptx_module *m, unsigned major,
			  unsigned minor)
{
	return m->version_major < major ||
	       (m->version_major == major && m->version_minor < minor);
}

/* Copy @m's text with token @t replaced by @with. */
static void splice_tok(struct strbuf *sb, const struct ptx_module *m,
		       size_t *from, uint32_t t, const char *with)
{
	sb_addn(sb, m->text + *from, m->toks[t].off - *from);
	sb_adds(sb, with);
	*from = tok_end(m, t);
}

int ptx_retarget(const char *text, size_t len, unsigned sm,
		 struct strbuf *out)
{
	struct ptx_module *m;
	unsigned major, minor;
	char name[16], version[16];
	size_t from = 0;
	uint32_t t;
	int err;

	err = ptx_parse("application", text, len, &m);
	if (err)
		return err;
	t = target_token(m);
	err = t ? check_retargetable(m) :
		  err_set(EGPU_EFORMAT, "application: PTX has no .target to raise");
	if (err) {
		ptx_module_free(m);
		return err;
	}
	target_isa(sm, &major, &minor);
	snprintf(version, sizeof(version), "%u.%u", major, minor);
	snprintf(name, sizeof(name), "sm_%u", sm);
	if (m->version_major && m->version_tok < t &&
	    version_below(m, major, minor))
		splice_tok(out, m, &from, m->version_tok, version);
	splice_tok(out, m, &from, t, name);
	sb_addn(out, m->text + from, len - from);
	ptx_module_free(m);
	return !sb_ok(out) ? err_set(EGPU_ENOMEM, "PTX: out of memory") : 0;
}
