/* SPDX-License-Identifier: MIT */
/*
 * Stored states. A state is stored at a prune point at most every few
 * instructions of a path; it stays "open" while paths below it are being
 * explored and becomes "explored" (proven safe) when the last one ends.
 * A path reaching a prune point in a state that an explored state there
 * covers is safe already; one reaching it in exactly the state of an open
 * state there (its own ancestor) is looping without progress.
 */
#include <stdlib.h>

#include "vstate.h"

/*
 * Store a state at most every CHECKPOINT_GAP instructions of a path, and
 * where more than CROWDED are stored at one instruction (a long loop), only
 * after as many instructions as there are states: a loop of n instructions
 * processed stores O(sqrt(n)) states instead of O(n).
 */
#define CHECKPOINT_GAP 8
#define CROWDED 64

static uint32_t open_bucket(const struct verifier *v, int insn, uint64_t fp)
{
	uint64_t h = (fp ^ (uint64_t)insn * 0x9e3779b97f4a7c15ULL);

	return (uint32_t)(h ^ h >> 29) & (v->open_size - 1);
}

static void list_insert(struct checkpoint **head, struct checkpoint *c)
{
	c->next = *head;
	c->prev = head;
	if (*head)
		(*head)->prev = &c->next;
	*head = c;
}

static void list_remove(struct checkpoint *c)
{
	*c->prev = c->next;
	if (c->next)
		c->next->prev = c->prev;
}

static int open_grow(struct verifier *v)
{
	uint32_t size = v->open_size ? 2 * v->open_size : 1024;
	struct checkpoint **old = v->open, **t = calloc(size, sizeof(*t));
	uint32_t old_size = v->open_size;

	if (!t)
		return vnomem();
	v->open = t;
	v->open_size = size;
	for (uint32_t b = 0; b < old_size; b++) {
		while (old[b]) {
			struct checkpoint *c = old[b];

			list_remove(c);
			list_insert(&t[open_bucket(v, c->st.insn,
						    c->fingerprint)], c);
		}
	}
	free(old);
	return 0;
}

/* A path ended: stored states whose every path ended are proven safe. */
void path_done(struct verifier *v, struct checkpoint *c)
{
	while (c && --c->branches == 0) {
		struct insn_aux *aux = &v->aux[c->st.insn];

		list_remove(c);
		v->open_cnt--;
		aux->nopen--;
		list_insert(&aux->states, c);
		aux->nstates++;
		c = c->parent;
	}
}

struct id_count {
	uint32_t ids[256];
	uint8_t counts[256];
	int n;
};

static void count_id(struct reg *r, void *arg)
{
	struct id_count *c = arg;

	if (r->type != REG_SCALAR || !r->id)
		return;
	for (int i = 0; i < c->n; i++) {
		if (c->ids[i] == r->id) {
			c->counts[i] = 2;
			return;
		}
	}
	if (c->n < (int)ARRAY_SIZE(c->ids)) {
		c->ids[c->n] = r->id;
		c->counts[c->n++] = 1;
	}
}

static void drop_single_id(struct reg *r, void *arg)
{
	struct id_count *c = arg;

	if (r->type != REG_SCALAR || !r->id)
		return;
	for (int i = 0; i < c->n; i++)
		if (c->ids[i] == r->id && c->counts[i] == 1)
			r->id = 0;
}

/* An id no other register shares links nothing: drop it before comparing. */
static void clear_single_ids(struct vstate *st)
{
	struct id_count c = { .n = 0 };

	state_for_each_reg(st, count_id, &c);
	state_for_each_reg(st, drop_single_id, &c);
}

static int add_checkpoint(struct verifier *v, uint64_t fingerprint)
{
	struct checkpoint *c;
	int err;

	if (v->open_cnt >= v->open_size && (err = open_grow(v)))
		return err;
	c = calloc(1, sizeof(*c));
	if (!c)
		return vnomem();
	err = state_copy(&c->st, v->cur);
	if (!err && (err = state_charge(v, &c->st)))
		state_release(&c->st);
	if (err) {
		free(c);
		return err;
	}
	c->parent = v->cur->parent;
	c->branches = 1;
	c->fingerprint = fingerprint;
	list_insert(&v->open[open_bucket(v, c->st.insn, fingerprint)], c);
	v->open_cnt++;
	v->aux[c->st.insn].nopen++;
	v->cur->parent = c;
	v->stats.states++;
	if (++v->live_states > v->stats.peak_states)
		v->stats.peak_states = v->live_states;
	return 0;
}

static void checkpoint_free(struct verifier *v, struct checkpoint *c)
{
	list_remove(c);
	v->live_states--;
	state_uncharge(v, &c->st);
	state_release(&c->st);
	free(c);
}

/* An explored state that keeps failing to prune is dropped. */
static bool evictable(const struct checkpoint *c)
{
	return c->misses > 16 + 8 * c->hits;
}

/* Whether the path from @c to the current state passed a loop head whose
 * end loopterm.c proved (widen.c): a cycle through it ends. */
static bool through_proven_head(const struct verifier *v,
				const struct checkpoint *c)
{
	bool passed = false;

	for (const struct checkpoint *d = v->cur->parent; d; d = d->parent) {
		if (d == c)
			return passed;
		passed |= d->loop_head;
	}
	return false;
}

/*
 * 1 when the current state equals one still open on its path: the loop
 * makes no progress. 2 when the loop passes a head whose end loopterm.c
 * proved (the abstract state repeats, the counter does not): the path is
 * covered by the open one.
 */
static int is_looping(struct verifier *v, uint64_t fp)
{
	struct vstate *cur = v->cur;

	if (!v->open_size)
		return 0;
	for (struct checkpoint *c = v->open[open_bucket(v, cur->insn, fp)]; c;
	     c = c->next)
		if (c->st.insn == cur->insn && c->fingerprint == fp &&
		    state_equal(v, &c->st, cur))
			return through_proven_head(v, c) ? 2 : 1;
	return 0;
}

/*
 * The stored states above the current path are compared with every
 * branch's operands from now on (DEMAND_FULL): a path below them depends
 * on values that DEMAND_RELAXED would let differ. Those above a marked one
 * are marked already.
 */
void path_depends_on_values(struct verifier *v)
{
	for (struct checkpoint *c = v->cur->parent; c && !c->full_demand;
	     c = c->parent)
		c->full_demand = true;
}

static bool is_covered(struct verifier *v)
{
	struct insn_aux *aux = &v->aux[v->cur->insn];
	struct checkpoint *c = aux->states;

	while (c) {
		struct checkpoint *next = c->next;

		if (state_covers(v, &c->st, v->cur, c->full_demand ?
				 DEMAND_FULL : DEMAND_RELAXED)) {
			c->hits++;
			/* the proof below @c holds for what it compares */
			if (c->full_demand)
				path_depends_on_values(v);
			return true;
		}
		c->misses++;
		if (evictable(c)) {
			aux->nstates--;
			checkpoint_free(v, c);
		}
		c = next;
	}
	return false;
}

/* Whether the path ends at @fp's state: 1 yes, 0 no, < 0 refused. */
static int path_ends(struct verifier *v, uint64_t fp)
{
	int looping = is_looping(v, fp);

	if (looping == 1)
		return vfail(v, "infinite loop: this instruction is reached "
			     "again in the same state");
	return looping == 2 || is_covered(v);
}

/* 1: the path is proven safe by a stored state; 0: go on; < 0: refused. */
int prune(struct verifier *v)
{
	struct vstate *cur = v->cur;
	struct insn_aux *aux = &v->aux[cur->insn];
	uint64_t crowd = aux->nstates + aux->nopen;
	uint64_t gap = crowd < CROWDED ? CHECKPOINT_GAP : crowd;
	int loop = 0, r;

	clear_single_ids(cur);
	if (aux->back_edge_target)
		loop = loop_widen(v);
	r = loop == LOOP_COVERED ? 1 : path_ends(v, state_fingerprint(v, cur));
	if (r) {
		v->stats.pruned += r > 0;
		return r;
	}
	/* at a proven loop head the state is stored: the next iteration is
	 * compared with it */
	if (cur->parent && cur->path_len - cur->parent->st.path_len < gap &&
	    !v->opts.all_states && loop != LOOP_STORE)
		return 0;
	r = add_checkpoint(v, state_fingerprint(v, cur));
	if (!r && loop == LOOP_STORE)
		cur->parent->loop_head = true;
	return r;
}

void checkpoints_free(struct verifier *v)
{
	for (size_t i = 0; v->aux && i < v->cnt; i++) {
		while (v->aux[i].states)
			checkpoint_free(v, v->aux[i].states);
		v->aux[i].nstates = 0;
	}
	for (uint32_t b = 0; b < v->open_size; b++)
		while (v->open[b])
			checkpoint_free(v, v->open[b]);
	free(v->open);
	v->open = NULL;
	v->open_size = v->open_cnt = 0;
}
