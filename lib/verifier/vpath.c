/* SPDX-License-Identifier: MIT */
/*
 * The path being explored, as every check sees it: refusing the program
 * with a message naming the instruction and its source line (vfail, and
 * too_complex when a budget runs out), queueing the other side of a branch
 * (push_branch), with the sides taken kept to replay a failing path into
 * the log, and the states' memory counted against its budget.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The loop head visited most: the likely culprit when the limit is hit. */
static int busiest_loop(const struct verifier *v)
{
	int best = -1;

	for (size_t i = 0; i < v->cnt; i++)
		if (v->aux[i].back_edge_target &&
		    (best < 0 || v->aux[i].visits > v->aux[best].visits))
			best = (int)i;
	return best;
}

/* @what ran out: the instructions, or the states' memory. */
int too_complex(struct verifier *v, const char *what)
{
	int loop = busiest_loop(v);
	char limit[96];

	if (!strcmp(what, "insns"))
		snprintf(limit, sizeof(limit), "%" PRIu64 " instructions processed (limit %" PRIu64 ")",
			 v->stats.insns_processed, v->max_insns);
	else
		snprintf(limit, sizeof(limit), "its states take %u MiB (the limit) after %" PRIu64 " instructions processed",
			 VERIFIER_MAX_STATE_BYTES >> 20, v->stats.insns_processed);
	if (loop < 0)
		return vfail(v, "program too complex: %s", limit);
	return vfail(v, "program too complex: %s; the loop at insn %d is not "
		     "proven to terminate (back edge: insn %d)", limit, loop,
		     v->aux[loop].back_edge_from);
}

static size_t state_bytes(const struct vstate *st)
{
	size_t n = sizeof(*st) + st->nrefs * sizeof(*st->refs);

	for (int i = 0; i < st->depth; i++)
		n += sizeof(*st->frames[i]) +
		     st->frames[i]->nslots * sizeof(*st->frames[i]->slots);
	return n;
}

int state_charge(struct verifier *v, struct vstate *st)
{
	size_t n = state_bytes(st);

	st->charged = 0;
	if (v->state_bytes + n > VERIFIER_MAX_STATE_BYTES && !v->opts.all_states)
		return too_complex(v, "memory");
	v->state_bytes += n;
	st->charged = (uint32_t)n;
	return 0;
}

void state_uncharge(struct verifier *v, const struct vstate *st)
{
	v->state_bytes -= st->charged;
}

void state_drop(struct verifier *v, struct vstate *st)
{
	if (st)
		state_uncharge(v, st);
	state_free(st);
}

/* Record that @st's path took side @taken of a two-way branch. */
static int fork_push(struct verifier *v, struct vstate *st, uint8_t taken)
{
	if (v->nforks == v->forks_cap) {
		uint32_t cap = v->forks_cap ? 2 * v->forks_cap : 256;
		struct fork_rec *f = realloc(v->forks, cap * sizeof(*f));

		if (!f)
			return vnomem();
		v->forks = f;
		v->forks_cap = cap;
	}
	v->forks[v->nforks++] = (struct fork_rec){ .prev = st->fork,
						   .taken = taken };
	st->fork = v->nforks;
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
	if (!err)
		err = state_charge(v, st);
	/* The sides taken, to replay a failing path into the log. */
	if (!err && v->opts.log)
		err = fork_push(v, st, 1);
	if (!err && v->opts.log)
		err = fork_push(v, v->cur, 0);
	if (err) {
		state_drop(v, st);
		return err;
	}
	st->insn = insn;
	if (st->parent)
		st->parent->branches++;
	v->pending[v->npending++] = st;
	*out = st;
	return 0;
}
