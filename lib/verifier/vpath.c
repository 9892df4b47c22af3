/* SPDX-License-Identifier: MIT */
/*
 * The path being explored, as every check sees it: refusing the program
 * with a message naming the instruction and its source line (vfail), and
 * queueing the other side of a branch (push_branch), with the sides taken
 * kept to replay a failing path into the log.
 */
#include <stdio.h>
#include <stdlib.h>

#include "vstate.h"

int vfail(struct verifier *v, const char *fmt, ...)
{
	char reason[512];
	struct strbuf text;
	va_list ap;
	int insn = v->cur ? v->cur->insn : v->where;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	sb_init(&text);
	if (insn >= 0 && (size_t)insn < v->cnt)
		disasm_insn(&text, v, insn);
	sb_adds(&text, ")");
	source_line(&text, v->prog, insn);
	err_set(EGPU_EVERIFY, "prog '%s': insn %d (%s: %s",
		v->prog->name ? v->prog->name : "?", insn,
		sb_ok(&text) && text.buf ? text.buf : ")", reason);
	sb_free(&text);
	return EGPU_EVERIFY;
}

static int hist_push(struct vstate *st, uint8_t taken)
{
	if (st->hist_len == st->hist_cap) {
		uint32_t cap = st->hist_cap ? 2 * st->hist_cap : 64;
		uint8_t *h = realloc(st->hist, cap);

		if (!h)
			return vnomem();
		st->hist = h;
		st->hist_cap = cap;
	}
	st->hist[st->hist_len++] = taken;
	return 0;
}

/* Queue the jump side of a branch; the current path falls through. */
int push_branch(struct verifier *v, int insn, struct vstate **out)
{
	struct vstate *st;
	int err;

	if (v->npending == v->pending_cap) {
		size_t cap = v->pending_cap ? 2 * v->pending_cap : 32;
		struct vstate **p = realloc(v->pending, cap * sizeof(*p));

		if (!p)
			return vnomem();
		v->pending = p;
		v->pending_cap = cap;
	}
	st = malloc(sizeof(*st));
	if (!st)
		return vnomem();
	err = state_copy(st, v->cur);
	/* The sides taken, to replay a failing path into the log. */
	if (!err && v->opts.log)
		err = hist_push(st, 1);
	if (!err && v->opts.log)
		err = hist_push(v->cur, 0);
	if (err) {
		state_free(st);
		return err;
	}
	st->insn = insn;
	if (st->parent)
		st->parent->branches++;
	v->pending[v->npending++] = st;
	*out = st;
	return 0;
}
