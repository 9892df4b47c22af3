/* SPDX-License-Identifier: MIT */
/*
 * Registers, stack slots and path states: creation, copies, and the two
 * comparisons that pruning and loop detection rest on.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vstate.h"

uint32_t new_id(struct verifier *v)
{
	return ++v->next_id;
}

int vnomem(void)
{
	return err_set(EGPU_ENOMEM, "verifier: out of memory");
}

void reg_not_init(struct reg *r)
{
	memset(r, 0, sizeof(*r));
	r->type = REG_NOT_INIT;
	r->origin = -1;
	sc_const(&r->v, 0);
}

void reg_scalar(struct reg *r, const struct scalar *s)
{
	reg_not_init(r);
	r->type = REG_SCALAR;
	r->v = *s;
}

void reg_unknown(struct reg *r)
{
	struct scalar s;

	sc_unknown(&s);
	reg_scalar(r, &s);
}

void reg_const(struct reg *r, uint64_t c)
{
	struct scalar s;

	sc_const(&s, c);
	reg_scalar(r, &s);
}

bool reg_const_value(const struct reg *r, uint64_t *c)
{
	if (r->type != REG_SCALAR || !sc_is_const(&r->v))
		return false;
	*c = r->v.t.value;
	return true;
}

const char *reg_type_name(const struct reg *r)
{
	static const char *const names[] = {
		[REG_NOT_INIT] = "uninitialised",
		[REG_SCALAR] = "scalar",
		[REG_PTR_CTX] = "ctx",
		[REG_PTR_STACK] = "fp",
		[REG_PTR_MAP_VALUE] = "map_value",
		[REG_PTR_MAP_VALUE_OR_NULL] = "map_value_or_null",
		[REG_PTR_RECORD] = "ringbuf_record",
		[REG_PTR_RECORD_OR_NULL] = "ringbuf_record_or_null",
		[REG_MAP_HANDLE] = "map_ptr",
		[REG_PTR_PARAMS] = "params",
	};

	return names[r->type];
}

struct vstate *state_new(void)
{
	return calloc(1, sizeof(struct vstate));
}

struct frame *frame_new(int callsite, int subprog, int frameno)
{
	struct frame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	for (int i = 0; i < BPF_REG_COUNT; i++)
		reg_not_init(&f->regs[i]);
	f->regs[BPF_REG_COUNT - 1].type = REG_PTR_STACK;
	f->regs[BPF_REG_COUNT - 1].frameno = (uint8_t)frameno;
	f->callsite = callsite;
	f->subprog = subprog;
	return f;
}

void frame_free(struct frame *f)
{
	if (f)
		free(f->slots);
	free(f);
}

static struct frame *frame_dup(const struct frame *src)
{
	struct frame *f = malloc(sizeof(*f));

	if (!f)
		return NULL;
	*f = *src;
	f->slots = NULL;
	if (src->nslots) {
		f->slots = malloc(src->nslots * sizeof(*f->slots));
		if (!f->slots) {
			free(f);
			return NULL;
		}
		memcpy(f->slots, src->slots, src->nslots * sizeof(*f->slots));
	}
	return f;
}

/* Free what @st owns, leaving it empty. */
void state_release(struct vstate *st)
{
	for (int i = 0; i < st->depth; i++)
		frame_free(st->frames[i]);
	free(st->refs);
	memset(st, 0, sizeof(*st));
}

void state_free(struct vstate *st)
{
	if (st)
		state_release(st);
	free(st);
}

/* Deep copy into an empty @dst. */
int state_copy(struct vstate *dst, const struct vstate *src)
{
	*dst = *src;
	dst->depth = 0;
	dst->refs = NULL;
	for (int i = 0; i < src->depth; i++) {
		dst->frames[i] = frame_dup(src->frames[i]);
		if (!dst->frames[i])
			goto fail;
		dst->depth = i + 1;
	}
	if (src->nrefs) {
		dst->refs = malloc(src->nrefs * sizeof(*dst->refs));
		if (!dst->refs)
			goto fail;
		memcpy(dst->refs, src->refs, src->nrefs * sizeof(*dst->refs));
	}
	return 0;
fail:
	dst->nrefs = 0;
	state_release(dst);
	return vnomem();
}

/* The slot, growing the frame's stack to reach it (NULL: out of memory). */
struct slot *stack_slot(struct frame *f, uint32_t index)
{
	if (index >= f->nslots) {
		uint32_t n = index + 1;
		struct slot *s = realloc(f->slots, n * sizeof(*s));

		if (!s)
			return NULL;
		memset(s + f->nslots, 0, (n - f->nslots) * sizeof(*s));
		f->slots = s;
		f->nslots = n;
	}
	return &f->slots[index];
}

int slot_spill_start(const struct slot *s, int b)
{
	for (int start = b; start >= 0; start--)
		if (s->spill_size[start])
			return start + s->spill_size[start] > b ? start : -1;
	return -1;
}

void state_for_each_reg(struct vstate *st,
			void (*fn)(struct reg *r, void *arg), void *arg)
{
	for (int i = 0; i < st->depth; i++) {
		struct frame *f = st->frames[i];

		for (int r = 0; r < BPF_REG_COUNT; r++)
			fn(&f->regs[r], arg);
		for (uint32_t s = 0; s < f->nslots; s++)
			for (int b = 0; b < 8; b++)
				if (f->slots[s].spill_size[b])
					fn(&f->slots[s].spill[b], arg);
	}
}

int ref_acquire(struct vstate *st, uint32_t id, int insn)
{
	struct ref *r = realloc(st->refs, (st->nrefs + 1) * sizeof(*r));

	if (!r)
		return vnomem();
	st->refs = r;
	r[st->nrefs++] = (struct ref){ id, insn };
	return 0;
}

bool ref_release(struct vstate *st, uint32_t id)
{
	for (uint32_t i = 0; i < st->nrefs; i++) {
		if (st->refs[i].id == id) {
			memmove(&st->refs[i], &st->refs[i + 1],
				(st->nrefs - i - 1) * sizeof(*st->refs));
			st->nrefs--;
			return true;
		}
	}
	return false;
}

/*
 * Registers of frame @frame whose value the rest of the path may read:
 * for a caller, what is live after its call returns, less r0-r5 which the
 * call overwrites.
 */
uint16_t frame_live_mask(const struct verifier *v, const struct vstate *st,
			 int frame)
{
	if (frame == st->depth - 1)
		return v->aux[st->insn].live_in;
	return v->aux[st->frames[frame + 1]->callsite + 1].live_in &
	       0x3c0; /* r6-r9 */
}

/*
 * The registers and slots whose values may matter (lib/verifier/demand.c).
 * A caller's slots all do: the functions it called may read them through
 * pointers it passed.
 */
static struct demand frame_demand(const struct verifier *v,
				  const struct vstate *st, int frame,
				  enum demand_mode mode)
{
	struct demand d;

	if (frame == st->depth - 1)
		return v->aux[st->insn].demand[mode];
	d = v->aux[st->frames[frame + 1]->callsite + 1].demand[mode];
	return (struct demand){ ~0ULL, d.regs & 0x3c0 };
}

/* Pairs of ids seen so far, old -> cur, kept one-to-one. */
struct idmap {
	uint32_t old[64], cur[64];
	int n;
};

static bool ids_match(struct idmap *m, uint32_t old, uint32_t cur)
{
	for (int i = 0; i < m->n; i++) {
		if (m->old[i] == old)
			return m->cur[i] == cur;
		if (m->cur[i] == cur)
			return false;
	}
	if (m->n == (int)ARRAY_SIZE(m->old))
		return false;
	m->old[m->n] = old;
	m->cur[m->n++] = cur;
	return true;
}

/*
 * Whether every value @cur may hold is one @old may hold, so that the
 * proof made from @old applies (@exact: the same values).
 */
static bool reg_covers(const struct reg *old, const struct reg *cur,
		       struct idmap *m, bool exact)
{
	if (old->type == REG_NOT_INIT)
		return !exact || cur->type == REG_NOT_INIT;
	if (old->type != cur->type)
		return false;
	if (exact ? !sc_equal(&old->v, &cur->v) :
	    !sc_contains(&old->v, &cur->v))
		return false;
	switch (old->type) {
	case REG_SCALAR:
		/* A link between copies only adds knowledge. */
		return !old->id || (cur->id && ids_match(m, old->id, cur->id));
	case REG_PTR_STACK:
		return old->frameno == cur->frameno && old->off == cur->off;
	case REG_PTR_CTX:
	case REG_PTR_PARAMS:
		return old->off == cur->off;
	case REG_PTR_MAP_VALUE:
	case REG_MAP_HANDLE:
		return old->map == cur->map && old->off == cur->off;
	case REG_PTR_MAP_VALUE_OR_NULL:
		return old->map == cur->map && old->off == cur->off &&
		       ids_match(m, old->id, cur->id);
	default: /* ring buffer records */
		return old->off == cur->off && old->size == cur->size &&
		       ids_match(m, old->ref, cur->ref) &&
		       (!old->id || ids_match(m, old->id, cur->id));
	}
}

/* @any_value: a spilled scalar whose value cannot matter (not @exact). */
static bool slot_covers(const struct slot *old, const struct slot *cur,
			struct idmap *m, bool exact, bool any_value)
{
	/* Pointers are spilled whole, at byte 0. */
	bool cur_ptr = cur->spill_size[0] == 8 && cur->spill[0].type != REG_SCALAR;

	for (int b = 0; b < 8; b++) {
		const struct reg *o = &old->spill[b], *c = &cur->spill[b];

		if (!old->spill_size[b])
			continue;
		if (cur->spill_size[b] != old->spill_size[b])
			return false;
		if (any_value && o->type == REG_SCALAR ?
		    c->type != REG_SCALAR : !reg_covers(o, c, m, exact))
			return false;
	}
	for (int b = 0; b < 8; b++) {
		if (exact ? old->kind[b] != cur->kind[b] :
		    old->kind[b] != SB_INVALID && cur->kind[b] == SB_INVALID)
			return false;
		/* Spilled bytes are covered by the same spill only (above);
		 * unknown data does not cover a spilled pointer. */
		if ((old->kind[b] == SB_SPILL && cur->kind[b] != SB_SPILL) ||
		    (old->kind[b] == SB_MISC && cur->kind[b] == SB_SPILL && cur_ptr))
			return false;
	}
	return true;
}

static const struct slot empty_slot;

/* Registers to compare: live ones; a scalar whose value cannot matter only
 * needs to be a scalar on both sides (exact comparisons compare it all),
 * in a register or spilled. */
static bool frame_covers(const struct frame *old, const struct frame *cur,
			 uint16_t live, const struct demand *demand,
			 struct idmap *m, bool exact)
{
	uint32_t n = old->nslots > cur->nslots ? old->nslots : cur->nslots;

	if (old->callsite != cur->callsite)
		return false;
	for (int r = 0; r < BPF_REG_COUNT - 1; r++) {
		const struct reg *o = &old->regs[r], *c = &cur->regs[r];

		if (!(live & (1u << r)))
			continue;
		if (!exact && !(demand->regs & (1u << r)) &&
		    o->type == REG_SCALAR) {
			if (c->type != REG_SCALAR)
				return false;
			continue;
		}
		if (!reg_covers(o, c, m, exact))
			return false;
	}
	for (uint32_t s = 0; s < n; s++) {
		const struct slot *o = s < old->nslots ? &old->slots[s] :
				       &empty_slot;
		const struct slot *c = s < cur->nslots ? &cur->slots[s] :
				       &empty_slot;
		bool any_value = !exact && s < 64 &&
				 !(demand->slots & (1ULL << s));

		if (!slot_covers(o, c, m, exact, any_value))
			return false;
	}
	return true;
}

static bool states_compare(const struct verifier *v, const struct vstate *old,
			   const struct vstate *cur, bool exact,
			   enum demand_mode mode)
{
	struct idmap m = { .n = 0 };

	if (old->depth != cur->depth || old->nrefs != cur->nrefs)
		return false;
	for (int i = 0; i < old->depth; i++) {
		struct demand d = frame_demand(v, cur, i, mode);

		if (!frame_covers(old->frames[i], cur->frames[i],
				  frame_live_mask(v, cur, i), &d, &m, exact))
			return false;
	}
	for (uint32_t i = 0; i < old->nrefs; i++)
		if (!ids_match(&m, old->refs[i].id, cur->refs[i].id))
			return false;
	return true;
}

bool state_covers(const struct verifier *v, const struct vstate *old,
		  const struct vstate *cur, enum demand_mode mode)
{
	return states_compare(v, old, cur, false, mode);
}

bool state_equal(const struct verifier *v, const struct vstate *a,
		 const struct vstate *b)
{
	return states_compare(v, a, b, true, DEMAND_FULL);
}

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static uint64_t reg_hash(uint64_t h, const struct reg *r)
{
	h = mix(h, r->type | (uint64_t)r->frameno << 8 |
		(uint64_t)(uint32_t)r->off << 32);
	if (r->type == REG_NOT_INIT)
		return h;
	h = mix(h, r->map);
	h = mix(h, r->v.t.value);
	h = mix(h, r->v.t.mask);
	h = mix(h, r->v.umin);
	h = mix(h, r->v.umax);
	h = mix(h, (uint64_t)r->v.smin);
	return mix(h, (uint64_t)r->v.smax);
}

/* Equal states have equal fingerprints (ids are left out on purpose). */
uint64_t state_fingerprint(const struct verifier *v, const struct vstate *st)
{
	uint64_t h = (uint64_t)st->depth << 32 | st->nrefs;

	for (int i = 0; i < st->depth; i++) {
		const struct frame *f = st->frames[i];
		uint16_t live = frame_live_mask(v, st, i);

		for (int r = 0; r < BPF_REG_COUNT - 1; r++)
			if (live & (1u << r))
				h = reg_hash(h, &f->regs[r]);
		for (uint32_t s = 0; s < f->nslots; s++) {
			const struct slot *sl = &f->slots[s];
			uint64_t kinds;

			memcpy(&kinds, sl->kind, sizeof(kinds));
			if (!kinds)
				continue; /* all invalid, like a missing slot */
			h = mix(h, kinds ^ s);
			for (int b = 0; b < 8; b++)
				if (sl->spill_size[b])
					h = reg_hash(h, &sl->spill[b]);
		}
	}
	return h;
}

void reg_print(struct strbuf *sb, const struct verifier *v,
	       const struct reg *r)
{
	bool var = !sc_is_const(&r->v) || r->v.t.value;

	switch (r->type) {
	case REG_NOT_INIT:
		sb_adds(sb, "?");
		return;
	case REG_SCALAR:
		sc_print(sb, &r->v);
		if (r->id)
			sb_printf(sb, "#%" PRIu32, r->id);
		return;
	case REG_PTR_STACK:
		sb_printf(sb, "fp%d", r->off);
		if (r->frameno)
			sb_printf(sb, "[frame %d]", r->frameno);
		break;
	default:
		sb_printf(sb, "%s(", reg_type_name(r));
		if (r->type != REG_PTR_CTX && r->type != REG_PTR_RECORD &&
		    r->type != REG_PTR_RECORD_OR_NULL &&
		    r->type != REG_PTR_PARAMS)
			sb_printf(sb, "map=%s,",
				  r->map < v->map_cnt && v->maps[r->map].name ?
				  v->maps[r->map].name : "?");
		if (r->type == REG_PTR_RECORD || r->type == REG_PTR_RECORD_OR_NULL)
			sb_printf(sb, "size=%" PRIu32 ",ref=%" PRIu32 ",",
				  r->size, r->ref);
		if (r->id)
			sb_printf(sb, "id=%" PRIu32 ",", r->id);
		sb_printf(sb, "off=%d)", r->off);
		break;
	}
	if (var) {
		sb_adds(sb, "+");
		sc_print(sb, &r->v);
	}
}

static void slot_print(struct strbuf *sb, const struct verifier *v,
		       const struct slot *s, int index)
{
	static const char kinds[] = { '?', 'm', 's' };
	char text[9];

	for (int b = 0; b < 8; b++)
		text[b] = kinds[s->kind[b]];
	text[8] = '\0';
	if (!strcmp(text, "????????"))
		return;
	sb_printf(sb, " fp%d=", -8 * (index + 1));
	if (s->spill_size[0] == 8) {
		reg_print(sb, v, &s->spill[0]);
		return;
	}
	sb_adds(sb, text);
	for (int b = 0; b < 8; b++) {
		if (!s->spill_size[b])
			continue;
		sb_printf(sb, "(%d:", b);
		reg_print(sb, v, &s->spill[b]);
		sb_adds(sb, ")");
	}
}

void state_print(struct strbuf *sb, const struct verifier *v,
		 const struct vstate *st)
{
	for (int i = 0; i < st->depth; i++) {
		const struct frame *f = st->frames[i];

		if (st->depth > 1)
			sb_printf(sb, "%s[frame %d]", i ? " " : "", i);
		for (int r = 0; r < BPF_REG_COUNT - 1; r++) {
			if (f->regs[r].type == REG_NOT_INIT)
				continue;
			sb_printf(sb, " r%d=", r);
			reg_print(sb, v, &f->regs[r]);
		}
		for (uint32_t s = 0; s < f->nslots; s++)
			slot_print(sb, v, &f->slots[s], (int)s);
	}
	for (uint32_t i = 0; i < st->nrefs; i++)
		sb_printf(sb, " ref%" PRIu32 "@insn%" PRId32, st->refs[i].id,
			  st->refs[i].insn);
}
