// SPDX-License-Identifier: MIT
/*
 * Spans (bpf_egpu_trace_span, docs/events.md "Spans") without a GPU: warps
 * of 32 lanes play lib/device/span_trace.cuh's protocol, with its state and
 * decisions from lib/maps/span_layout.h, on a real ring, against the real
 * consumer and the real decoder, under an adversary that picks which warp
 * calls with which lanes (divergence), lets each store land late and in
 * any order except across a fence, and runs the consumer between any two
 * steps. Lanes end early, some warps end without their flush (a trap);
 * then egpu_ringbuf_reclaim's pass takes their open spans. Each seed
 * checks: every access of every lane arrives once, with its address, size,
 * kind and site, in the lane's order, or belongs to a call counted as a
 * drop; drops counted = calls dropped; the consumer never waits forever.
 */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/bpf.h"
#include "egpu.h"
#include "egpu/bpf_maps.h" /* after egpu.h: its map types */
#include "maps/ring.h"
#include "maps/span_layout.h"
#include "ring_model.h"
#include "test_util.h"

#define WARPS 6
#define LANES 32
#define MAX_ACC 48
#define PENDING_MAX 4096

struct access {
	uint64_t addr;
	uint32_t site, size, kind;
	int state; /* 0 not made, 1 made, 2 dropped, 3 delivered */
};

/* A store made and not yet landed: at most 16 bytes. */
struct pending {
	uint8_t *at;
	uint8_t bytes[16];
	uint32_t n;
};

/* Access states cross threads in the threaded variant: atomics. */
static void set_state(struct access *x, int v)
{
	__atomic_store_n(&x->state, v, __ATOMIC_RELAXED);
}

static int get_state(const struct access *x)
{
	return __atomic_load_n(&x->state, __ATOMIC_RELAXED);
}

struct world {
	struct event_ring *r;
	struct dev_ring v;
	uint32_t tag;
	unsigned seed;
	struct access acc[WARPS][LANES][MAX_ACC];
	uint32_t n_acc[WARPS][LANES]; /* each lane's accesses */
	uint32_t next[WARPS][LANES];  /* the next one it makes */
	uint64_t st[WARPS][LANES];
	bool traps[WARPS];            /* ends without flushing */
	struct pending pend[WARPS][PENDING_MAX];
	uint32_t npend[WARPS];
	uint64_t calls, dropped_calls, delivered;
	uint64_t inline_steps, inline_claims, spans_filled_inline; /* trace mode */
	uint64_t short_steps; /* of them, short records */
	uint64_t undone_full, undone_skipped; /* ... inline claims undone */
	uint64_t handed_on;    /* ... lossless, their reservation handed on */
	uint64_t let_gos;      /* trace mode: spans published before a wait */
	/*
	 * Counted spans, as in a ring in GPU memory (span_publish): warps
	 * that count mark their spans RING_COUNTED and add the span's bytes
	 * to @done right after the publish's fence, before the header lands
	 * (the earliest the GPU's relaxed add may); the others publish
	 * uncounted (the mix must work). The consumer's side: the bytes of
	 * counted spans it took (@taken_counted), and its passes that found
	 * D + U == P (consume()).
	 */
	uint64_t done;
	uint32_t uncounted;    /* the warps that do not count */
	unsigned id;           /* the world's seed */
	uint64_t taken_counted;
	uint64_t settled_passes;
	uint32_t most_records; /* in one span */
	bool bad;
	/* A lossless ring's claim (which may wait for room) made while a lane
	 * of its warp owned an open span. */
	bool held_while_claiming;
	/* Warps on threads of their own, stores landing at once (for TSan):
	 * a header's release store stands for the fence before it. */
	bool threaded;
	/* The splicer's trace mode: its inline step where it applies, with
	 * each lane's registers %tcur and %tleft (lib/ptx/trace_site.c):
	 * where its span's next record goes, the slots left in it. */
	bool site_mode;
	/* Slots of a fresh lane's first span there, as a kernel's
	 * (tr_first_slots, then clamped), 0: the ring's (span_fold_sizes). */
	uint32_t first;
	/* Its regular sites may store short records (else numbered past a
	 * short record's 10 bits: the 16-byte records' inline path). */
	bool shorts;
	uint8_t *cur[WARPS][LANES];
	uint32_t left[WARPS][LANES];
	/* Groups: a strict subset of the lanes at one access, one step in
	 * @split_one_in (the warp splits). */
	uint32_t split_one_in;
	/* Threaded, trace mode: how warps meet at a barrier (BAR_*), each
	 * letting go of its lanes' spans first unless BAR_KEEPS_SPANS (the
	 * bug a test shows). */
	unsigned barriers;
	pthread_mutex_t bar_mu;
	pthread_cond_t bar_cv;
	uint32_t bar_live, bar_arrived, bar_gen;
	int first_done; /* BAR_FIRST_LAST: warp 0 made its first access */
};

#define BAR_EVERY 1u       /* every BARRIER_EVERY steps of each warp */
#define BAR_FIRST_LAST 2u  /* warp 0 after its first step, the others
			    * after their last, which they make after it */
#define BAR_KEEPS_SPANS 4u

static uint32_t rnd(struct world *w, uint32_t n)
{
	return (uint32_t)rand_r(&w->seed) % n;
}

static void store(struct world *w, uint32_t warp, uint8_t *at,
		  const void *src, uint32_t n)
{
	struct pending *p;
	uint64_t first;

	if (w->threaded) { /* the first word may be a header: atomic */
		memcpy(&first, src, 8);
		memcpy(at + 8, (const uint8_t *)src + 8, n - 8);
		__atomic_store_n((uint64_t *)at, first,
				 n == 8 ? __ATOMIC_RELEASE : __ATOMIC_RELAXED);
		return;
	}
	p = &w->pend[warp][w->npend[warp]++];

	ck_assert_uint_le(w->npend[warp], PENDING_MAX);
	p->at = at;
	p->n = n;
	memcpy(p->bytes, src, n);
}

/* Whether @warp's spans are counted. */
static bool counts(const struct world *w, uint32_t warp)
{
	return !(w->uncounted >> warp & 1);
}

/* One of @warp's pending stores lands, any of them. */
static void land_one(struct world *w, uint32_t warp)
{
	uint32_t i = rnd(w, w->npend[warp]);
	struct pending p = w->pend[warp][i];

	w->pend[warp][i] = w->pend[warp][--w->npend[warp]];
	if (p.n == 8) /* a header: as the GPU's volatile store */
		__atomic_store_n((uint64_t *)p.at, *(uint64_t *)p.bytes,
				 __ATOMIC_RELEASE);
	else
		memcpy(p.at, p.bytes, p.n);
}

/* A fence: everything @warp stored before lands before what follows. */
static void fence(struct world *w, uint32_t warp)
{
	while (w->npend[warp])
		land_one(w, warp);
}

static uint8_t *slot_at(struct world *w, uint64_t st, uint32_t slot)
{
	return (uint8_t *)(uintptr_t)w->v.data +
	       ((span_st_start(st) * SPAN_SLOT) & w->v.mask) + slot * SPAN_SLOT;
}

/*
 * The publish of the span of @st at @at: one fence, one header store;
 * counted (ring_publish_at), the span's bytes added to the
 * published-bytes word after the fence, the header landing after that
 * (here as late as the adversary likes).
 */
static void publish_span_at(struct world *w, uint32_t warp, uint64_t st,
			    uint8_t *at)
{
	uint32_t bytes = span_st_slots(st) * SPAN_SLOT;
	uint32_t flags = RING_COMMIT | RING_SPAN | (counts(w, warp) ? RING_COUNTED : 0);
	uint64_t h = (uint64_t)flags << 32 | (bytes - RING_HDR_SIZE);

	fence(w, warp);
	if (counts(w, warp))
		__atomic_fetch_add(&w->done, bytes, __ATOMIC_RELEASE);
	store(w, warp, at, &h, 8);
}

/* span_publish. */
static void publish(struct world *w, uint32_t warp, uint64_t st)
{
	publish_span_at(w, warp, st, slot_at(w, st, 0));
}

/*
 * The trace mode's publish of the span of @st whose next record goes at
 * @cur (trace_site.c's publish_span): the header at @cur less the slots
 * used, its length from the state's slots.
 */
static void publish_at_cursor(struct world *w, uint32_t warp, uint64_t st,
			      uint8_t *cur)
{
	/* a cursor in a slot's second half: that slot is one of the used */
	uintptr_t off = (uintptr_t)(cur - (uint8_t *)(uintptr_t)w->v.data);

	cur += (off + SPAN_SHORT_BYTES) / SPAN_SLOT * SPAN_SLOT - off;
	publish_span_at(w, warp, st, cur - span_st_used(st) * SPAN_SLOT);
}

/* Whether @cur stands in a slot's second half (after a short record). */
static bool at_half_slot(const struct world *w, const uint8_t *cur)
{
	return (uintptr_t)(cur - (const uint8_t *)(uintptr_t)w->v.data) % SPAN_SLOT != 0;
}

/* The registers the runtime returns with the state (span_regs_of). */
static void regs_of(struct world *w, uint32_t warp, uint32_t lane)
{
	uint64_t st = w->st[warp][lane];
	bool own = span_st_own(st);

	w->cur[warp][lane] = own ? slot_at(w, st, span_st_used(st)) : NULL;
	w->left[warp][lane] = own ? span_st_slots(st) - span_st_used(st) : 0;
}

static void skip(struct world *w, uint32_t warp, uint8_t *at, uint32_t len)
{
	uint64_t h = (uint64_t)(RING_COMMIT | RING_DISCARD) << 32 |
		     (len - RING_HDR_SIZE);

	store(w, warp, at, &h, 8);
}

/*
 * A lossless ring's claim may wait for room, so no lane of its warp may
 * own an open span meanwhile (but its @lead, which published its own
 * first): docs/events.md, "Lossless rings".
 */
static void check_none_open(struct world *w, uint32_t warp, uint32_t lead)
{
	for (uint32_t i = 0; (w->v.flags & RING_LOSSLESS) && i < LANES; i++)
		if (i != lead && (w->site_mode ? w->left[warp][i] != 0 :
				  span_st_own(w->st[warp][i])))
			w->held_while_claiming = true;
}

/* span_claim, as the device does it, by @lead of @warp, asking for @asks
 * (span_asks_slots); @held and @held_slots as it takes them (the first
 * try's reservation made, reserved's value before). */
static uint64_t claim(struct world *w, uint32_t warp, uint32_t lead,
		      uint32_t asks, uint32_t need, bool exact, uint64_t held,
		      uint32_t held_slots)
{
	uint32_t most = w->v.max_record / SPAN_SLOT;
	bool again = span_claim_again(w->v.flags & RING_LOSSLESS, need,
				      w->v.mask + 1);

	check_none_open(w, warp, lead);
	for (int tries = 0; need + 2 <= most && (tries < 2 || again); tries++) {
		/* ring_claim_one keeps the whole want or drops: the model
		 * asks for it alone (the GPU may keep less, >= the least). */
		uint32_t want = span_claim_ask(asks, need, exact, tries,
					       held == SPAN_NOT_HELD ? 0 : held_slots,
					       most, w->v.mask + 1).want;
		uint64_t pos;
		uint32_t kept, head, slots;
		uint8_t *at;
		uint64_t h[2];

		kept = want * SPAN_SLOT;
		pos = tries || held == SPAN_NOT_HELD ?
		      model_reserve_pos(&w->v, 0, kept, 1) :
		      model_reserve_held(&w->v, 0, held, kept, 1);
		if (pos == UINT64_MAX)
			return 0;
		head = (uint32_t)(pos & 8);
		at = (uint8_t *)(uintptr_t)w->v.data + (pos & w->v.mask);
		slots = (kept - head) / SPAN_SLOT;
		if ((pos & w->v.mask) + kept > w->v.mask + 1 || slots < need + 1) {
			skip(w, warp, at, kept);
			continue;
		}
		if (head)
			skip(w, warp, at, head);
		if ((kept - head) % SPAN_SLOT)
			skip(w, warp, at + kept - 8, 8);
		h[0] = (uint64_t)RING_SPAN << 32 | (slots * SPAN_SLOT - RING_HDR_SIZE);
		h[1] = (uint64_t)warp << 32; /* struct span_info: block 0, smid 0 */
		store(w, warp, at + head, h, 16);
		return span_state(w->tag, (pos + head) / SPAN_SLOT, 1, slots, 1);
	}
	__atomic_fetch_add(&((struct ring_ctl *)(uintptr_t)w->v.ctl)->drops, 1,
			   __ATOMIC_RELAXED);
	return 0;
}

/* The slots of the inline claim's span for a leader of state @st (owning
 * none), from what mem_trace.c folds (@f), as claim_reserve emits it:
 * twice its slots where its last span filled (used == slots), else its
 * slots; for a fresh state @first (a kernel's) if not 0, else the
 * ring's. */
static uint32_t inline_slots(const struct span_fold *f, uint32_t first,
			     uint64_t st)
{
	uint32_t slots = span_st_slots(st);
	uint32_t want = !slots ? first : span_st_used(st) == slots ? 2 * slots : slots;

	if (!slots && !first)
		return f->first;
	want = want > f->least ? want : f->least;
	return want < f->most ? want : f->most;
}

/*
 * The leader's claim as trace_site.c emits it (claim_inline): the slots (inline_slots: asked for as
 * span_claim's first try would, checked), the cached consumer position
 * loaded, reserved, the room checked, prod, the span fits between a
 * slot's start and the shard's end; its header and owner stored, its
 * state made. Else undone: without room the bytes given back to
 * reserved, with a position that makes no span its bytes one record the
 * consumer skips; UINT64_MAX then (the group calls). But a lossless
 * ring's claim without room hands its reservation on to the runtime's
 * claim (claim_held): that claim's state, 0 when dropped.
 */
static uint64_t claim_inline(struct world *w, uint32_t warp, uint32_t lead,
			     uint64_t lst)
{
	struct ring_counters *c = (struct ring_counters *)&w->v; /* in host memory */
	uint32_t most = w->v.max_record / SPAN_SLOT;
	uint64_t cap = w->v.mask + 1;
	struct span_fold f = span_fold_sizes(most, cap);
	uint32_t want = inline_slots(&f, w->first, lst);
	uint64_t bytes = (uint64_t)want * SPAN_SLOT;
	uint64_t cons = model_cons_seen(c);
	uint64_t before = __atomic_fetch_add(&c->reserved, bytes, __ATOMIC_RELAXED);
	uint64_t pos, h[2];
	uint8_t *at;

	ck_assert(!(w->v.flags & RING_IN_DEVICE_MEMORY));
	if (span_st_slots(lst) || !w->first)
		ck_assert_uint_eq(want, span_claim_slots(
			span_next_slots(span_asks_slots(lst, w->tag), 1),
			f.least, most, cap));
	if (before + bytes - cons > cap) {
		if (w->v.flags & RING_LOSSLESS) {
			__atomic_fetch_add(&w->handed_on, 1, __ATOMIC_RELAXED);
			return claim(w, warp, lead, span_asks_slots(lst, w->tag),
				     1, false, before, want);
		}
		__atomic_fetch_sub(&c->reserved, bytes, __ATOMIC_RELAXED);
		__atomic_fetch_add(&w->undone_full, 1, __ATOMIC_RELAXED);
		return UINT64_MAX;
	}
	pos = model_hand_out(c, bytes);
	at = (uint8_t *)(uintptr_t)w->v.data + (pos & w->v.mask);
	if ((pos & w->v.mask) + bytes > cap || (pos & 8)) {
		skip(w, warp, at, (uint32_t)bytes);
		__atomic_fetch_add(&w->undone_skipped, 1, __ATOMIC_RELAXED);
		return UINT64_MAX;
	}
	h[0] = (uint64_t)RING_SPAN << 32 | (bytes - RING_HDR_SIZE);
	h[1] = (uint64_t)warp << 32; /* struct span_info: block 0, smid 0 */
	store(w, warp, at, h, 16);
	return (pos >> 4 & ((1ull << SPAN_START_BITS) - 1)) |
	       (uint64_t)want << SPAN_SLOTS_SHIFT | span_state(w->tag, 0, 1, 0, 1);
}

/* The group's record: span_rec_of, on the lanes' addresses @a. */
static uint32_t encode(const uint64_t *a, uint32_t mask, const struct access *l,
		       uint64_t *words, uint32_t *nbytes)
{
	uint32_t lead = (uint32_t)__builtin_ctz(mask), n = 0, width = 0, fmt;
	uint32_t next = mask & (mask - 1) ? (uint32_t)__builtin_ctz(mask & (mask - 1)) : lead;
	int64_t stride = next != lead ? (int64_t)(a[next] - a[lead]) / (next - lead) : 0;
	bool affine = true, fit = span_fields_fit(l->kind, l->size, l->site);
	uint8_t *p = (uint8_t *)words;

	for (uint32_t m = mask; m; m &= m - 1) {
		uint32_t i = (uint32_t)__builtin_ctz(m);
		uint32_t wd = span_delta_width((int64_t)(a[i] - a[lead]));

		affine &= a[i] == a[lead] + (uint64_t)((int64_t)(i - lead) * stride);
		width = wd > width ? wd : width;
	}
	memset(words, 0, 40 * 8);
	if (fit && affine && span_affine_fits(a[lead], stride)) {
		words[0] = span_word0(SPAN_AFFINE, 0, l->kind, l->size, l->site, mask);
		words[1] = span_affine_w1(a[lead], (int32_t)stride);
		*nbytes = SPAN_SLOT;
		return 1;
	}
	fmt = fit ? SPAN_SCATTERED : SPAN_LONG;
	words[0] = span_word0(fmt, width, fit ? l->kind : 0, fit ? l->size : 0,
			      fit ? l->site : 0, mask);
	words[1] = a[lead];
	if (!fit)
		words[2] = l->site | (uint64_t)l->size << 32 | (uint64_t)l->kind << 48;
	p += SPAN_SLOT * (fit ? 1 : 2);
	for (uint32_t m = mask; m; m &= m - 1, n++) {
		int64_t d = (int64_t)(a[__builtin_ctz(m)] - a[lead]);

		memcpy(p + ((size_t)n << width), &d, 1u << width);
	}
	*nbytes = span_rec_slots(fmt, n, width) * SPAN_SLOT;
	return *nbytes / SPAN_SLOT;
}

/* span_trace for the lanes of @mask of @warp, each at its next access. */
static void call(struct world *w, uint32_t warp, uint32_t mask)
{
	uint32_t lead = (uint32_t)__builtin_ctz(mask), need, nbytes;
	uint64_t a[LANES] = { 0 }, words[40], lst = w->st[warp][lead];
	struct access *la = &w->acc[warp][lead][w->next[warp][lead]];
	bool later = false, keep = span_may_stay_open(
		w->v.flags & RING_LOSSLESS, w->site_mode, mask);
	uint8_t *at;

	for (uint32_t m = mask; m; m &= m - 1) {
		uint32_t i = (uint32_t)__builtin_ctz(m);
		struct access *x = &w->acc[warp][i][w->next[warp][i]];

		/* One instruction: one site, size and kind for the group. */
		x->site = la->site;
		x->size = la->size;
		x->kind = la->kind;
		a[i] = x->addr;
		later |= span_floor_after(w->st[warp][i], w->tag,
					  span_st_start(lst)) > 0;
	}
	need = encode(a, mask, la, words, &nbytes);
	__atomic_fetch_add(&w->calls, 1, __ATOMIC_RELAXED);
	if (!span_can_take(lst, w->tag, need, later)) {
		uint64_t st2;

		if (span_st_own(lst))
			publish(w, warp, lst);
		st2 = claim(w, warp, lead, span_asks_slots(lst, w->tag), need,
			    !keep, SPAN_NOT_HELD, 0);
		if (!st2) {
			w->st[warp][lead] = lst & ~SPAN_OWN;
			__atomic_fetch_add(&w->dropped_calls, 1, __ATOMIC_RELAXED);
			for (uint32_t m = mask; m; m &= m - 1) {
				uint32_t i = (uint32_t)__builtin_ctz(m);

				set_state(&w->acc[warp][i][w->next[warp][i]++], 2);
			}
			return;
		}
		lst = st2;
	}
	at = slot_at(w, lst, span_st_used(lst));
	lst += (uint64_t)need << 36;
	for (uint32_t k = 0; k < nbytes; k += 16)
		store(w, warp, at + k, (uint8_t *)words + k, 16);
	for (uint32_t m = mask; m; m &= m - 1) {
		uint32_t i = (uint32_t)__builtin_ctz(m);
		uint64_t st = w->st[warp][i];

		set_state(&w->acc[warp][i][w->next[warp][i]++], 1);
		if (i == lead)
			continue;
		if (span_st_own(st) && span_st_tag(st) == w->tag)
			publish(w, warp, st);
		w->st[warp][i] = span_state(w->tag, span_st_start(lst), 0,
					    span_st_slots(st), 0);
	}
	if (span_st_used(lst) == span_st_slots(lst) || !keep) {
		publish(w, warp, lst);
		lst &= ~SPAN_OWN;
	}
	w->st[warp][lead] = lst;
}

/* The group's accesses made, as the leader's (one instruction). */
static void made(struct world *w, uint32_t warp, uint32_t mask,
		 const struct access *la, int state)
{
	struct access l = *la;

	for (uint32_t m = mask; m; m &= m - 1) {
		uint32_t i = (uint32_t)__builtin_ctz(m);
		struct access *x = &w->acc[warp][i][w->next[warp][i]++];

		x->site = l.site;
		x->size = l.size;
		x->kind = l.kind;
		set_state(x, state);
	}
}

/*
 * The splicer's claim (trace_site.c's claim_span), the leader owning no
 * span: one claimed inline (claim_inline; in a lossless ring too, where
 * the call after an undone claim waits for room); its registers at slot
 * 1; each other lane's state then starts where it does, its own slots
 * kept. 0 when dropped (counted), -1 when the inline claim was undone
 * (the group calls), else 1.
 */
static int inline_claim(struct world *w, uint32_t warp, uint32_t mask,
			const struct access *la)
{
	uint32_t lead = (uint32_t)__builtin_ctz(mask);
	uint64_t lst = w->st[warp][lead];
	uint64_t st2;

	check_none_open(w, warp, lead);
	st2 = claim_inline(w, warp, lead, lst);

	__atomic_fetch_add(&w->inline_claims, 1, __ATOMIC_RELAXED);
	if (st2 == UINT64_MAX)
		return -1;
	if (!st2) {
		w->st[warp][lead] = lst & ~SPAN_OWN;
		__atomic_fetch_add(&w->calls, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&w->dropped_calls, 1, __ATOMIC_RELAXED);
		made(w, warp, mask, la, 2);
		return 0;
	}
	w->st[warp][lead] = st2;
	regs_of(w, warp, lead);
	for (uint32_t m = mask & (mask - 1); m; m &= m - 1) {
		uint32_t i = (uint32_t)__builtin_ctz(m);

		w->st[warp][i] = (st2 & SPAN_START_TAG_MASK) |
				 (w->st[warp][i] & SPAN_SLOTS_MASK);
	}
	return 1;
}

/*
 * The splicer's inline step (lib/ptx/trace_site.c) for the lanes of
 * @mask, if its vote lets it: the access affine for the stride the next
 * lane gives (taken as 16 bits; from an inactive lane anything), the
 * leader's address within 48 bits, no other lane owning a span (its
 * %tleft > 0); if the leader owns none, it claims one (inline_claim), else
 * every other lane's state must start (low 32 bits) where the leader's
 * span does. The leader's one record at its %tcur, which moves on; the
 * span published when that filled it, its header found from the cursor.
 * Whether it applied (a claim dropped applies). (One instruction: the
 * site, size and kind are the leader's access's for the group, as in
 * call().)
 */
static bool inline_step(struct world *w, uint32_t warp, uint32_t mask,
			unsigned *seed)
{
	uint32_t lead = (uint32_t)__builtin_ctz(mask);
	uint64_t lst = w->st[warp][lead], h[2];
	const struct access *la = &w->acc[warp][lead][w->next[warp][lead]];
	uint64_t base = la->addr;
	bool next = lead + 1 < LANES && (mask >> (lead + 1) & 1);
	bool claims = !w->left[warp][lead];
	int16_t stride = (int16_t)(next ?
		w->acc[warp][lead + 1][w->next[warp][lead + 1]].addr - base :
		(uint64_t)rand_r(seed));
	bool may_short = span_short_fits(la->kind, la->size, la->site);
	bool is_short = may_short && mask == UINT32_MAX && stride == (int16_t)la->size;
	bool half;

	if (base >> SPAN_ADDR_BITS ||
	    !span_fields_fit(la->kind, la->size, la->site) ||
	    !span_may_stay_open(w->v.flags & RING_LOSSLESS, true, mask))
		return false;
	for (uint32_t m = mask & (mask - 1); m; m &= m - 1) {
		uint32_t i = (uint32_t)__builtin_ctz(m);
		uint64_t st = w->st[warp][i];

		if (w->left[warp][i] ||
		    (!claims && (uint32_t)st != (uint32_t)lst) ||
		    w->acc[warp][i][w->next[warp][i]].addr - base !=
			    (uint64_t)((int64_t)(i - lead) * stride))
			return false;
	}
	/* A site whose record may be short claims inline only for one; the
	 * 16-byte record needs a whole slot after a half one. */
	if (may_short && !is_short && claims)
		return false;
	if (!is_short && !claims && w->left[warp][lead] == 1 &&
	    at_half_slot(w, w->cur[warp][lead]))
		return false;
	if (claims) {
		int got = inline_claim(w, warp, mask, la);

		if (got <= 0) /* dropped (applied), or undone: the call */
			return got == 0;
	}
	lst = w->st[warp][lead];
	half = at_half_slot(w, w->cur[warp][lead]);
	/* Made before a publish can hand the record to the consumer. */
	made(w, warp, mask, la, 1);
	if (is_short) { /* a half slot: the first starts it, the second fills it */
		h[0] = span_short_word(la->kind, la->size, la->site, base);
		store(w, warp, w->cur[warp][lead], h, SPAN_SHORT_BYTES);
		__atomic_fetch_add(&w->short_steps, 1, __ATOMIC_RELAXED);
		w->cur[warp][lead] += SPAN_SHORT_BYTES;
		if (half)
			w->left[warp][lead]--;
		else
			lst += SPAN_USED_ONE;
	} else {
		if (half) { /* the half slot given up */
			w->left[warp][lead]--;
			w->cur[warp][lead] += SPAN_SHORT_BYTES;
		}
		h[0] = span_word0(SPAN_AFFINE, 0, la->kind, la->size, la->site, mask);
		h[1] = span_affine_w1(base, stride);
		store(w, warp, w->cur[warp][lead], h, 16);
		w->cur[warp][lead] += SPAN_SLOT;
		lst += SPAN_USED_ONE;
		w->left[warp][lead]--;
	}
	if (!w->left[warp][lead]) {
		publish_at_cursor(w, warp, lst, w->cur[warp][lead]);
		lst &= ~SPAN_OWN;
		__atomic_fetch_add(&w->spans_filled_inline, 1, __ATOMIC_RELAXED);
	}
	w->st[warp][lead] = lst;
	__atomic_fetch_add(&w->calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&w->inline_steps, 1, __ATOMIC_RELAXED);
	return true;
}

/*
 * Trace mode: lane @lane of @warp lets go of its span before a wait, a
 * call, or its warp splitting (trace_site.c's emit_flush): published
 * where it owns one; its state, owning one or not, as span_let_go leaves
 * it.
 */
static void let_go(struct world *w, uint32_t warp, uint32_t lane)
{
	if (w->left[warp][lane]) {
		publish_at_cursor(w, warp, w->st[warp][lane], w->cur[warp][lane]);
		__atomic_fetch_add(&w->let_gos, 1, __ATOMIC_RELAXED);
	}
	w->st[warp][lane] = span_let_go(w->st[warp][lane]);
	w->left[warp][lane] = 0;
}

static void let_go_all(struct world *w, uint32_t warp)
{
	for (uint32_t i = 0; i < LANES; i++)
		let_go(w, warp, i);
}

/* Lane @lane of @warp ends: its exit probe flushes (unless it traps);
 * in trace mode inline, where its %tleft says it owns a span. */
static void lane_exit(struct world *w, uint32_t warp, uint32_t lane)
{
	uint64_t st = w->st[warp][lane];

	if (!w->traps[warp] && w->site_mode && w->left[warp][lane])
		publish_at_cursor(w, warp, st, w->cur[warp][lane]);
	else if (!w->traps[warp] && !w->site_mode && span_st_own(st))
		publish(w, warp, st);
	w->st[warp][lane] = 0;
	w->left[warp][lane] = 0;
}

static uint32_t live_lanes(struct world *w, uint32_t warp)
{
	uint32_t m = 0;

	for (uint32_t i = 0; i < LANES; i++)
		if (w->next[warp][i] < w->n_acc[warp][i])
			m |= 1u << i;
	return m;
}

/* The consumer's check of one span: each access once, in lane order. */
static int check_span(void *user, const void *data, size_t size)
{
	struct world *w = user;
	struct egpu_span_iter it;
	struct egpu_span_info info;
	struct egpu_warp_rec rec;
	uint32_t records = 0, flags;
	uint64_t lanes = 0, counted_lanes;
	int got, counted = egpu_span_count(data, size, &counted_lanes);

	if (egpu_span_begin(&it, data, size, &info) || info.warp >= WARPS) {
		w->bad = true;
		return -1;
	}
	/* Its header, where the host consumer reads it in place: counted
	 * if its warp counts, unless reclaimed (never published). */
	flags = (uint32_t)(__atomic_load_n((const uint64_t *)data - 1,
					   __ATOMIC_ACQUIRE) >> 32);
	if ((flags & RING_COUNTED) !=
	    (counts(w, info.warp) && (flags & RING_COMMIT) ? RING_COUNTED : 0)) {
		w->bad = true;
		return -1;
	}
	if (flags & RING_COUNTED)
		w->taken_counted += RING_HDR_SIZE + size;
	while ((got = egpu_span_next(&it, &rec)) == 1) {
		if (++records > w->most_records)
			w->most_records = records;
		lanes += (uint64_t)__builtin_popcount(rec.mask);
		for (uint32_t i = 0; i < LANES; i++)
			if (!(rec.mask >> i & 1) && rec.addr[i])
				w->bad = true; /* lanes off the mask read 0 */
		for (uint32_t m = rec.mask; m; m &= m - 1) {
			uint32_t i = (uint32_t)__builtin_ctz(m), k = 0;
			struct access *x = w->acc[info.warp][i];

			while (k < MAX_ACC && get_state(&x[k]) >= 2)
				k++; /* its earlier ones: delivered or dropped */
			if (k == MAX_ACC || get_state(&x[k]) != 1 ||
			    x[k].addr != rec.addr[i] || x[k].site != rec.site ||
			    x[k].size != rec.size || x[k].kind != rec.kind) {
				w->bad = true;
				return -1;
			}
			set_state(&x[k], 3);
			w->delivered++;
		}
	}
	/* Counting without decoding agrees with decoding. */
	if (got < 0 || counted != (int)records || counted_lanes != lanes)
		w->bad = true;
	return got < 0 ? -1 : 0;
}

/*
 * Whether a store @warp has not landed yet lies in the ring's positions
 * [@from, @to) other than as a header (an 8-byte store).
 */
static bool bytes_pending(const struct world *w, uint64_t from, uint64_t to)
{
	for (uint32_t b = 0; b < WARPS; b++)
		for (uint32_t i = 0; i < w->npend[b]; i++) {
			const struct pending *x = &w->pend[b][i];
			uint64_t off = (uint64_t)(x->at - (uint8_t *)(uintptr_t)w->v.data);

			if (x->n != 8 && ((off - from) & w->v.mask) < to - from)
				return true;
		}
	return false;
}

/*
 * A consumer pass, and the check of "Copied once" on it (as ring_dev.c
 * reads the positions): the published-bytes word D read first, then the
 * producer position P; U, the bytes the consumer took that no producer
 * counted (skips, uncounted and reclaimed spans), is its position less
 * the counted spans it took. D + U never passes P (no span counted
 * twice), and where they meet, every byte below P but headers has landed
 * (the adversary's single thread: its stores wait in the warps' pending
 * lists), so a copy made then holds every record whole whose header it
 * reads published; the pass takes those.
 */
static void consume(struct world *w)
{
	const struct ring_ctl *ctl = (const struct ring_ctl *)(uintptr_t)w->v.ctl;
	const struct ring_counters *c = (const struct ring_counters *)&w->v;
	uint64_t d = __atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
	uint64_t p = __atomic_load_n(&c->prod, __ATOMIC_ACQUIRE);
	uint64_t cons = __atomic_load_n(&ctl->cons, __ATOMIC_ACQUIRE);
	uint64_t u = cons - w->taken_counted;

	ck_assert_msg(d + u <= p, "seed %u: D %llu + U %llu past P %llu", w->id,
		      (unsigned long long)d, (unsigned long long)u,
		      (unsigned long long)p);
	if (d + u == p && !w->bad) {
		w->settled_passes++;
		ck_assert_msg(w->threaded || !bytes_pending(w, cons, p),
			      "seed %u: settled at %llu, yet a record's bytes below it not landed",
			      w->id, (unsigned long long)p);
	}
	ck_assert_int_ge(ring_consume(w->r, check_span, w, NULL), 0);
}

/* Lane accesses: affine in a converged warp, some far, some odd sizes. */
static void plan(struct world *w)
{
	bool odd[WARPS][MAX_ACC];

	/* Trace mode: a warp's k-th accesses are all regular (affine when
	 * the lanes are in step) but for one in 8. */
	for (uint32_t b = 0; b < WARPS; b++)
		for (uint32_t k = 0; k < MAX_ACC; k++)
			odd[b][k] = !w->site_mode || rnd(w, 8) == 0;
	for (uint32_t b = 0; b < WARPS; b++) {
		/* With barriers: no trap (one ends the grid: nobody waits
		 * after it), and every other warp's lanes (every warp's, at
		 * the first and last) all run to the end. */
		bool whole = (w->barriers & BAR_FIRST_LAST) ||
			     (w->barriers && b % 2);

		w->traps[b] = !w->barriers && rnd(w, 4) == 0;
		for (uint32_t i = 0; i < LANES; i++) {
			w->n_acc[b][i] = rnd(w, 3) || whole ?
					 MAX_ACC : 1 + rnd(w, MAX_ACC);
			for (uint32_t k = 0; k < MAX_ACC; k++) {
				struct access *x = &w->acc[b][i][k];
				uint32_t shape = odd[b][k] ? rnd(w, 16) : 15;

				x->addr = 0x700000000000ull + ((uint64_t)k << 20) +
					  (b * LANES + i) * 4u;
				if (shape == 0)
					x->addr += rnd(w, 200);
				else if (shape == 1)
					x->addr ^= 1ull << 52;
				x->size = shape == 2 ? 256 : 4;
				x->site = shape == 3 ? 1u << 20 :
					  k + (w->shorts ? 0 : 1024);
				x->kind = 1 + k % 3;
			}
		}
	}
}

/* A world on a ring of @cap bytes, lossless with a wait of @wait_ns if not
 * 0, its warps in the splicer's trace mode if @site_mode, meeting at
 * @barriers (BAR_*; threaded only). */
static struct world *world_new(unsigned seed, uint64_t cap, bool threaded,
			       uint64_t wait_ns, bool site_mode,
			       unsigned barriers)
{
	struct world *w = calloc(1, sizeof(*w));
	struct map_spec spec = { .name = "span", .type = EGPU_MAP_RINGBUF,
				 .max_entries = (uint32_t)cap,
				 .flags = wait_ns ? EGPU_F_RING_LOSSLESS : 0 };

	ck_assert_ptr_nonnull(w);
	w->seed = seed;
	w->id = seed;
	/* all warps count in one world in three, else all but one */
	w->uncounted = seed % 3 ? 1u << seed % WARPS : 0;
	w->threaded = threaded;
	w->site_mode = site_mode; /* before plan() */
	w->first = seed % 2 ? 1 + seed / 2 % 6 : 0;
	w->shorts = seed / 2 % 2;
	w->barriers = barriers;
	/* (rarer where short records are to be made: a whole warp's) */
	w->split_one_in = barriers || (site_mode && w->shorts) ? 16 : 2;
	w->bar_live = WARPS;
	pthread_mutex_init(&w->bar_mu, NULL);
	pthread_cond_init(&w->bar_cv, NULL);
	ck_assert_int_eq(ring_new_for_map(&spec, &w->r), 0);
	if (wait_ns)
		ck_assert_int_eq(ring_set_wait(w->r, wait_ns), 0);
	ring_host_view(w->r, &w->v);
	w->tag = span_ring_tag(0x7000000000ull);
	plan(w);
	return w;
}

/* In trace mode, the lanes of @m at the same access as a random one of
 * them: the lanes at one instruction; else @m. */
static uint32_t in_step(struct world *w, uint32_t b, uint32_t m,
			unsigned *seed)
{
	uint32_t pick = (uint32_t)rand_r(seed) % (uint32_t)__builtin_popcount(m);
	uint32_t lane = 0, same = 0;

	if (!w->site_mode)
		return m;
	for (uint32_t k = m; k; k &= k - 1, pick--)
		if (!pick)
			lane = (uint32_t)__builtin_ctz(k);
	for (uint32_t k = m; k; k &= k - 1) {
		uint32_t i = (uint32_t)__builtin_ctz(k);

		same |= w->next[b][i] == w->next[b][lane] ? 1u << i : 0;
	}
	return same;
}

/* A call of @warp's live lanes (converged or a subset), then their exits. */
static void warp_step(struct world *w, uint32_t b, unsigned *seed)
{
	uint32_t m = live_lanes(w, b), g = in_step(w, b, m, seed);
	uint32_t sub = g & ((uint32_t)rand_r(seed) << 1 ^ (uint32_t)rand_r(seed));
	uint32_t group = rand_r(seed) % w->split_one_in == 0 && sub ? sub : g;

	/* Trace mode: a wait or a call now and then, where a lane lets go of
	 * its span; a lossless ring's warp lets go before it splits. */
	if (w->site_mode && (rand_r(seed) % 8 == 0 ||
			     ((w->v.flags & RING_LOSSLESS) && group != m)))
		let_go_all(w, b);
	if (!w->site_mode || !inline_step(w, b, group, seed)) {
		call(w, b, group);
		for (uint32_t k = group; w->site_mode && k; k &= k - 1)
			regs_of(w, b, (uint32_t)__builtin_ctz(k));
	}
	for (uint32_t i = 0; i < LANES; i++)
		if ((m >> i & 1) && !(live_lanes(w, b) >> i & 1))
			lane_exit(w, b, i);
}

/* The grid ended: what is left consumed, then reclaimed; every check. */
static void finish(struct world *w, unsigned seed)
{
	uint64_t made = 0, settled;
	bool open = false;

	consume(w);
	/* Lossless, a probe's helper: every call published its span, traps
	 * leave none open (trace mode keeps spans open between waits). */
	for (uint32_t b = 0; (w->v.flags & RING_LOSSLESS) && !w->site_mode &&
	     b < WARPS; b++)
		for (uint32_t i = 0; i < LANES; i++)
			for (uint32_t k = 0; k < w->n_acc[b][i]; k++)
				ck_assert_int_ge(get_state(&w->acc[b][i][k]), 2);
	ring_set_reclaim(w->r, true);
	settled = w->settled_passes;
	consume(w);
	/* All taken but spans left open (traps): this pass was settled. */
	for (uint32_t b = 0; b < WARPS; b++)
		open |= w->traps[b];
	ck_assert_msg(open || w->settled_passes == settled + 1,
		      "seed %u: everything published and taken, yet not settled", seed);
	ring_set_reclaim(w->r, false);
	/* Every counted span was taken as published, counted once; with
	 * everything taken, D + U == P: the next pass would be settled. */
	ck_assert_uint_eq(w->done, w->taken_counted);
	ck_assert_uint_eq(w->done + ((const struct ring_ctl *)(uintptr_t)w->v.ctl)->cons -
			  w->taken_counted, w->v.prod);
	ck_assert_msg(!w->bad, "seed %u: a record wrong, twice or out of order", seed);
	ck_assert_msg(!w->held_while_claiming,
		      "seed %u: a lossless claim while its warp held a span open", seed);
	for (uint32_t b = 0; b < WARPS; b++)
		for (uint32_t i = 0; i < LANES; i++)
			for (uint32_t k = 0; k < w->n_acc[b][i]; k++) {
				ck_assert_int_ge(get_state(&w->acc[b][i][k]), 2);
				made++;
			}
	if (getenv("SPAN_STATS"))
		fprintf(stderr, "seed %u: calls %llu (inline %llu, short %llu, claiming %llu, undone with no room %llu, handed on %llu, at a shard's end %llu, filling %llu, let go %llu, most records %u) dropped %llu delivered %llu of %llu, passes settled %llu\n",
			seed, (unsigned long long)w->calls,
			(unsigned long long)w->inline_steps,
			(unsigned long long)w->short_steps,
			(unsigned long long)w->inline_claims,
			(unsigned long long)w->undone_full,
			(unsigned long long)w->handed_on,
			(unsigned long long)w->undone_skipped,
			(unsigned long long)w->spans_filled_inline,
			(unsigned long long)w->let_gos, w->most_records,
			(unsigned long long)w->dropped_calls,
			(unsigned long long)w->delivered, (unsigned long long)made,
			(unsigned long long)w->settled_passes);
	/* Trace mode: the inline step (short records among them) and claim
	 * taken; a ring that is not lossless drops only in the call after a
	 * claim undone */
	if (w->site_mode && w->shorts) {
		ck_assert_uint_gt(w->inline_steps, 0);
		ck_assert_uint_gt(w->short_steps, 0);
	} else if (w->site_mode) {
		ck_assert_uint_gt(w->inline_steps, 0);
		ck_assert_uint_eq(w->short_steps, 0);
		ck_assert_uint_gt(w->inline_claims, 0);
		if (!(w->v.flags & RING_LOSSLESS) && w->dropped_calls)
			ck_assert_uint_gt(w->undone_full, 0);
	}
	ck_assert_uint_eq(ring_drops(w->r), w->dropped_calls);
	ck_assert_uint_le(w->delivered, made);
	ck_assert(!ring_ready(w->r));
	model_assert_settled(&w->v);
	ring_free(w->r);
	pthread_mutex_destroy(&w->bar_mu);
	pthread_cond_destroy(&w->bar_cv);
	free(w);
}

/* One thread: the adversary picks every step. */
static void play(unsigned seed, uint64_t cap, uint64_t wait_ns, bool site_mode)
{
	struct world *w = world_new(seed, cap, false, wait_ns, site_mode, 0);
	uint32_t live;

	do {
		uint32_t b = rnd(w, WARPS), pick = rnd(w, 8);

		live = 0;
		for (uint32_t k = 0; k < WARPS; k++)
			live |= live_lanes(w, k) ? 1u << k : 0;
		if (pick == 0)
			consume(w);
		else if (pick < 4 && w->npend[b])
			land_one(w, b);
		else if (live_lanes(w, b))
			warp_step(w, b, &w->seed);
	} while (live);
	for (uint32_t b = 0; b < WARPS; b++) /* every store landed */
		fence(w, b);
	finish(w, seed);
}

struct warp_job {
	struct world *w;
	uint32_t warp;
	unsigned seed;
	int done;
};

#define BARRIER_EVERY 6

/* All warps that have not ended meet (bar.sync): the last one in lets
 * them all go on; a warp that ends (@leave) counts as arrived from then
 * on, as exited threads do for bar.sync. */
static void barrier(struct world *w, bool leave)
{
	uint32_t gen;

	pthread_mutex_lock(&w->bar_mu);
	gen = w->bar_gen;
	if (leave)
		w->bar_live--;
	else
		w->bar_arrived++;
	if (w->bar_arrived && w->bar_arrived == w->bar_live) {
		w->bar_arrived = 0;
		w->bar_gen++;
		pthread_cond_broadcast(&w->bar_cv);
	}
	while (!leave && gen == w->bar_gen)
		pthread_cond_wait(&w->bar_cv, &w->bar_mu);
	pthread_mutex_unlock(&w->bar_mu);
}

/* Whether @warp meets the others at the barrier after its @n-th step. */
static bool meets_now(struct world *w, uint32_t warp, uint32_t n)
{
	if (w->barriers & BAR_FIRST_LAST)
		return warp ? !live_lanes(w, warp) : n == 1;
	return (w->barriers & BAR_EVERY) && n % BARRIER_EVERY == 0 &&
	       live_lanes(w, warp);
}

static void *warp_run(void *arg)
{
	struct warp_job *j = arg;
	struct world *w = j->w;

	while ((w->barriers & BAR_FIRST_LAST) && j->warp &&
	       !__atomic_load_n(&w->first_done, __ATOMIC_ACQUIRE))
		sched_yield();
	for (uint32_t n = 1; live_lanes(w, j->warp); n++) {
		warp_step(w, j->warp, &j->seed);
		if (!j->warp)
			__atomic_store_n(&w->first_done, 1, __ATOMIC_RELEASE);
		if (rand_r(&j->seed) % 4 == 0)
			sched_yield();
		if (!meets_now(w, j->warp, n))
			continue;
		if (!(w->barriers & BAR_KEEPS_SPANS))
			let_go_all(w, j->warp);
		barrier(w, false);
	}
	if (w->barriers)
		barrier(w, true);
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* How the consumer of play_threaded keeps up. */
enum pace { EAGER, SLOW, CRAWL, STOPPED };

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*
 * Each warp on a thread of its own, the consumer on this one: polling
 * without a pause, with 200 us between passes, or not until every warp
 * ended. The producers' time in ns.
 */
static uint64_t play_threaded(unsigned seed, uint64_t cap, uint64_t wait_ns,
			      enum pace pace, bool site_mode, unsigned barriers,
			      struct world **keep)
{
	struct world *w = world_new(seed, cap, true, wait_ns, site_mode, barriers);
	struct warp_job j[WARPS];
	pthread_t t[WARPS];
	uint64_t t0 = now_ns();
	int done;

	for (uint32_t b = 0; b < WARPS; b++) {
		j[b] = (struct warp_job){ .w = w, .warp = b, .seed = seed * 31 + b };
		ck_assert_int_eq(pthread_create(&t[b], NULL, warp_run, &j[b]), 0);
	}
	do {
		done = 0;
		for (uint32_t b = 0; b < WARPS; b++)
			done += __atomic_load_n(&j[b].done, __ATOMIC_ACQUIRE);
		if (pace != STOPPED)
			consume(w);
		if (pace != EAGER)
			usleep(pace == CRAWL ? 2000 : 200);
	} while (done < WARPS);
	for (uint32_t b = 0; b < WARPS; b++)
		pthread_join(t[b], NULL);
	t0 = now_ns() - t0;
	if (keep)
		*keep = w;
	else
		finish(w, seed);
	return t0;
}

/* A ring that holds everything: nothing dropped, all delivered. */
START_TEST(every_access_once_in_order)
{
	play(1000 + (unsigned)_i, 1u << 20, 0, false);
}
END_TEST

/* Small rings that wrap, skip their end and drop: exact accounting. */
START_TEST(small_rings_wrap_and_drop)
{
	play(2000 + (unsigned)_i, 16384, 0, false);
}
END_TEST

/* Warps on threads against the consumer (the build TSan runs: docs). */
START_TEST(warps_on_threads_against_the_consumer)
{
	play_threaded(3000 + (unsigned)_i, _i % 2 ? 16384 : 1u << 20, 0, EAGER,
		      false, 0, NULL);
}
END_TEST

/*
 * Lossless, one thread: a full ring makes a call wait 1 ms (the consumer
 * cannot run meanwhile), give up, and the calls after it drop at once
 * until the consumer moves; accounting stays exact, and no span is left
 * open for the reclaim pass, traps or not.
 */
START_TEST(lossless_waits_are_bounded_and_drops_exact)
{
	play(4000 + (unsigned)_i, 2048, 1000000, false);
}
END_TEST

/* Lossless, a consumer 64 times smaller than the accesses and slow: nothing lost. */
START_TEST(lossless_slow_consumer_loses_nothing)
{
	struct world *w;

	play_threaded(5000 + (unsigned)_i, 16384, 10000000000ull, SLOW, false,
		      0, &w);
	ck_assert_uint_eq(w->dropped_calls, 0);
	ck_assert_uint_eq(ring_drops(w->r), 0);
	finish(w, 5000 + (unsigned)_i);
}
END_TEST

/*
 * Lossless, a consumer that polls only once the warps ended: one bounded
 * wait (50 ms), not one per call; every call after it dropped and counted.
 */
START_TEST(lossless_stopped_consumer_costs_one_wait)
{
	struct world *w;
	uint64_t ns = play_threaded(6000 + (unsigned)_i, 16384, 50000000,
				    STOPPED, false, 0, &w);

	ck_assert_uint_gt(w->dropped_calls, 0);
	ck_assert_uint_ge(ns, 50000000);
	ck_assert_msg(ns < 2000000000ull, "the warps took %llu ms", (unsigned long long)(ns / 1000000));
	finish(w, 6000 + (unsigned)_i);
}
END_TEST

/*
 * The inline claim's size (what mem_trace.c folds, as claim_reserve
 * computes it) is span_claim's first try's, span_claim_slots and all, for
 * every state a leader owning none can have: a span that filled (used ==
 * slots), a let-go's or a floor's (used 0), one with a slot left that a
 * record needing two could not take; for shards of 64 bytes to 16 MiB and
 * any largest record.
 */
START_TEST(inline_claim_sizes_as_span_claim)
{
	uint32_t tag = span_ring_tag(0x7000000000ull);

	for (uint64_t cap = 64; cap <= 1u << 24; cap *= 2)
		for (uint32_t most = 2; most <= 2 * SPAN_MAX_SLOTS; most++) {
			struct span_fold f = span_fold_sizes(most, cap);

			for (uint32_t slots = 0; slots <= SPAN_MAX_SLOTS; slots++)
				for (uint32_t k = 0; k < 3; k++) {
					uint32_t used = k == 0 ? 0 : k == 1 ? slots :
							slots ? slots - 1 : 0;
					uint64_t st = span_state(tag, 0, used, slots, 0);

					ck_assert_uint_eq(inline_slots(&f, 0, st),
						span_claim_slots(span_next_slots(
							span_asks_slots(st, tag), 1),
							f.least, most, cap));
				}
		}
}
END_TEST

/*
 * The shard the inline publish counts a span in, from its address
 * (span_shard_at), is the one that holds it: the first and last span
 * position of every shard, in rings of every size split into shards of
 * every power of two (and up to 255 of them, as ring_dev_fit_shards
 * makes one per SM), with records of at most 16 bytes to 64 KiB, where
 * the shards span less than 2^31 bytes (mem_trace.c counts only those).
 */
START_TEST(shard_of_a_span_from_its_address)
{
	static const uint32_t largest[] = { 16, 4096, RING_RECORD_MAX };

	for (uint64_t cap = RING_SHARD_MIN_BYTES; cap <= RING_MAX_BYTES; cap *= 2)
		for (uint64_t unit = 1; unit <= RING_SHARDS_MAX &&
		     cap / unit >= RING_SHARD_MIN_BYTES; unit *= 2)
			for (uint32_t r = 0; r < 3; r++) {
				uint64_t shard = cap / unit;
				uint64_t stride = shard + largest[r];
				struct span_shard_div dv = span_shard_div_of(stride);

				for (uint64_t n = 1; n < 256 &&
				     n * stride < 1ull << 31; n++) {
					uint64_t i = n - 1, first = i * stride;

					ck_assert_uint_eq(span_shard_at(dv, (uint32_t)first), i);
					ck_assert_uint_eq(span_shard_at(dv, (uint32_t)(first + shard - SPAN_SLOT)), i);
				}
			}
}
END_TEST

/*
 * The splicer's trace mode: the inline step where its vote lets it, the
 * runtime's call otherwise; the same adversary and checks, in a ring
 * that holds everything, in small rings that wrap and drop (in 2 KiB,
 * spans of at most half of it), lossless, and with warps on threads.
 */
START_TEST(trace_mode_against_the_adversary)
{
	unsigned seed = 7000 + (unsigned)_i;

	switch (_i % 4) {
	case 0:
		play(seed, 1u << 20, 0, true);
		break;
	case 1:
		play(seed, _i % 8 == 1 ? 16384 : 2048, 0, true);
		break;
	case 2:
		play(seed, 2048, 1000000, true);
		break;
	default:
		play_threaded(seed, _i % 8 == 3 ? 16384 : 1u << 20, 0, EAGER,
			      true, 0, NULL);
	}
}
END_TEST

/*
 * Trace mode, lossless, warps on threads meeting at a barrier every few
 * steps, a 16 KiB ring and a consumer pausing 200 us between passes:
 * warps keep spans of many records, let go of them before each barrier
 * and each split, and nothing is dropped.
 */
START_TEST(lossless_trace_mode_spans_and_barriers)
{
	unsigned seed = 8000 + (unsigned)_i;
	struct world *w;

	play_threaded(seed, 8192, 10000000000ull, CRAWL, true, BAR_EVERY, &w);
	if (getenv("SPAN_STATS"))
		fprintf(stderr, "seed %u: %llu spans let go of\n", seed,
			(unsigned long long)w->let_gos);
	ck_assert_uint_eq(ring_drops(w->r), 0);
	ck_assert_uint_ge(w->most_records, 4);
	ck_assert_uint_gt(w->let_gos, 0);
	finish(w, seed);
}
END_TEST

/*
 * Warp 0 makes one access and waits at a barrier for the others, which
 * make all of theirs before it (five times what a 2 KiB ring holds), the
 * consumer polling all along: warp 0's span is published at the barrier,
 * so the consumer passes it and nothing is dropped (@keeps 0); with that
 * publish left out (BAR_KEEPS_SPANS, the bug), the others wait for room
 * behind a span whose owner waits for them, until the bound (200 ms)
 * runs out and records are dropped (counted).
 */
static void barrier_after_first_access(unsigned seed, unsigned keeps)
{
	struct world *w;
	uint64_t ns = play_threaded(seed, 2048, keeps ? 200000000 : 10000000000ull, EAGER, true,
				    BAR_FIRST_LAST | keeps, &w);

	if (keeps) {
		ck_assert_uint_gt(ring_drops(w->r), 0);
		ck_assert_uint_ge(ns, 200000000);
	} else {
		ck_assert_uint_eq(ring_drops(w->r), 0);
	}
	finish(w, seed);
}

START_TEST(lossless_barrier_after_a_span_loses_nothing)
{
	barrier_after_first_access(8100 + (unsigned)_i, 0);
}
END_TEST

START_TEST(lossless_span_held_at_a_barrier_drops)
{
	barrier_after_first_access(8200 + (unsigned)_i, BAR_KEEPS_SPANS);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("span");
	TCase *tc = tcase_create("span");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, every_access_once_in_order, 0, TU_ROUNDS(12));
	tcase_add_loop_test(tc, small_rings_wrap_and_drop, 0, TU_ROUNDS(12));
	tcase_add_loop_test(tc, warps_on_threads_against_the_consumer, 0, TU_ROUNDS(6));
	tcase_add_loop_test(tc, lossless_waits_are_bounded_and_drops_exact, 0, TU_ROUNDS(8));
	tcase_add_loop_test(tc, lossless_slow_consumer_loses_nothing, 0, 4);
	tcase_add_loop_test(tc, lossless_stopped_consumer_costs_one_wait, 0, 4);
	tcase_add_test(tc, inline_claim_sizes_as_span_claim);
	tcase_add_test(tc, shard_of_a_span_from_its_address);
	tcase_add_loop_test(tc, trace_mode_against_the_adversary, 0, TU_ROUNDS(24));
	tcase_add_loop_test(tc, lossless_trace_mode_spans_and_barriers, 0, 4);
	tcase_add_loop_test(tc, lossless_barrier_after_a_span_loses_nothing, 0, TU_ROUNDS(16));
	tcase_add_loop_test(tc, lossless_span_held_at_a_barrier_drops, 0, 2);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
