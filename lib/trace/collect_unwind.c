/* SPDX-License-Identifier: MIT */
/*
 * Return addresses of the calling thread, as backtrace() gives them, at a
 * fraction of its cost. backtrace() runs libgcc's unwinder, which for
 * every frame finds the function's FDE in .eh_frame and interprets its
 * CFA program from the function's start, every time. Here each return
 * address's unwind rule is worked out once (unwind_rule.c) and cached; a
 * capture is then a hash lookup and two loads per frame, and most of a
 * capture is a compare with one the thread made before (the kept walks,
 * below). A frame whose rule is beyond the cached kinds (a signal frame,
 * an unusual DWARF expression) or a stack pointer leaving the thread's
 * stack makes the whole capture fall back to backtrace(), so the result
 * is always what backtrace() would give; egpu trace counts those. Frames
 * end where backtrace()'s do: at code without an FDE, or where the
 * return address is undefined (_start, clone3).
 */
#include <execinfo.h>
#include <stdlib.h>
#include <string.h>

#include "collect_impl.h"
#include "unwind_rule.h"

/* The thread's stack, where every read of the unwinder must land. */
static _Thread_local struct {
	uintptr_t lo, hi;
	bool known, none;
} stack;

static bool stack_bounds(void)
{
	pthread_attr_t attr;
	void *base;
	size_t size;

	if (stack.known)
		return !stack.none;
	stack.known = true;
	stack.none = true;
	if (pthread_getattr_np(pthread_self(), &attr))
		return false;
	if (!pthread_attr_getstack(&attr, &base, &size)) {
		stack.lo = (uintptr_t)base;
		stack.hi = (uintptr_t)base + size;
		stack.none = false;
	}
	pthread_attr_destroy(&attr);
	return !stack.none;
}

bool uw_stack_has(uintptr_t addr, size_t len)
{
	return stack_bounds() && addr >= stack.lo && addr + len <= stack.hi;
}

#if defined(__x86_64__)

/* The cached walk's state for one trace. */
struct unwinder {
	struct rule_table rules;
	uint64_t id;          /* tells threads' walk logs apart (walk_log) */
	/* captures left to backtrace(), and the first frame that sent one
	 * there (egpu trace reports it: each costs a full DWARF unwind) */
	atomic_uint_fast64_t slow;
	_Atomic uintptr_t slow_pc;
	atomic_uint_fast64_t reused;  /* walks finished from a previous one */
};

/* ---- the capture ---- */

struct regs {
	uintptr_t pc, sp, bp;
};

/* The caller's state as after this call returns: pc = the return
 * address, sp above it, rbp as it is. */
void egpu_unwind_regs(struct regs *r);
__asm__(".text\n"
	".globl egpu_unwind_regs\n"
	".hidden egpu_unwind_regs\n"
	".type egpu_unwind_regs, @function\n"
	"egpu_unwind_regs:\n"
	".cfi_startproc\n"
	"\tmovq (%rsp), %rax\n"
	"\tmovq %rax, 0(%rdi)\n"
	"\tleaq 8(%rsp), %rax\n"
	"\tmovq %rax, 8(%rdi)\n"
	"\tmovq %rbp, 16(%rdi)\n"
	"\tret\n"
	".cfi_endproc\n"
	".size egpu_unwind_regs, .-egpu_unwind_regs\n");

/* -1, noting @pc as what sent the first slow capture to backtrace(). */
static int give_up(struct unwinder *u, uintptr_t pc)
{
	uintptr_t none = 0;

	atomic_compare_exchange_strong(&u->slow_pc, &none, pc);
	return -1;
}

/* ---- the previous walks ---- */

/*
 * Launches from one thread come from a few call paths (a model's layer
 * alternates a cuBLAS launch and an elementwise one), so most of a stack
 * is one the thread walked recently. Each walk logs its steps: the state
 * it stepped from and the stack words it read; the thread keeps its last
 * few. When a new walk reaches a state a kept walk also stepped from, and
 * every word that walk read from there on still holds what it read, the
 * rest of the walk would read the same words and take the same steps: its
 * frames are copied, a compare per word instead of a rule lookup per
 * frame. A word that changed (another caller further out) makes the walk
 * go on by the rules, and try that log again only past the word's frame.
 */
#define WALK_LOGS 4

struct step {
	uintptr_t pc, sp, bp;   /* the state stepped from */
	uintptr_t ra_at;        /* where the next pc was read */
	uintptr_t bp_at;        /* where the next rbp was read; 0: none */
	uintptr_t cfa_at;       /* where the next sp was read; 0: none */
	bool uses_bp;           /* its rule reads rbp (else rbp is carried) */
};

/* A thread's kept walks, and one buffer (scratch) the walk logs into. */
struct walk_log {
	uint64_t unwinder;      /* the uw_new() they were walked for */
	uint32_t cap;           /* steps each buffer holds */
	unsigned scratch;
	uint64_t clock;         /* for used[]: the least recent goes first */
	uint32_t n[WALK_LOGS + 1];
	bool whole[WALK_LOGS + 1];  /* reached the stack's end, not a max */
	uint64_t used[WALK_LOGS + 1];
	struct step *s[WALK_LOGS + 1];
};

static pthread_key_t log_key;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static atomic_uint_fast64_t unwinders;

static void log_key_make(void)
{
	if (pthread_key_create(&log_key, free))
		log_key = (pthread_key_t)-1;
}

static struct walk_log *log_new(uint32_t max)
{
	struct walk_log *l = malloc(sizeof(*l) + (WALK_LOGS + 1) *
				    (size_t)max * sizeof(struct step));

	if (!l || pthread_setspecific(log_key, l)) {
		free(l);
		return NULL;
	}
	l->cap = max;
	for (unsigned i = 0; i <= WALK_LOGS; i++)
		l->s[i] = (struct step *)(l + 1) + (size_t)i * max;
	l->unwinder = 0;
	return l;
}

/* This thread's logs for @u's walks of up to @max frames; NULL: none. */
static struct walk_log *log_of(struct unwinder *u, uint32_t max)
{
	struct walk_log *l;

	pthread_once(&log_once, log_key_make);
	if (log_key == (pthread_key_t)-1)
		return NULL;
	l = pthread_getspecific(log_key);
	if (l && l->cap < max) {
		free(l);
		l = NULL;
	}
	if (!l && !(l = log_new(max)))
		return NULL;
	if (l->unwinder != u->id) {
		l->unwinder = u->id;
		l->scratch = 0;
		l->clock = 0;
		memset(l->n, 0, sizeof(l->n));
		memset(l->used, 0, sizeof(l->used));
	}
	return l;
}

static uintptr_t word(uintptr_t at)
{
	return *(const uintptr_t *)at;
}

/*
 * Whether a kept walk's @n steps from @k on would be taken again: the
 * index of the first whose words changed, or @n when none did. A walk
 * that ended at a null return address (@whole) read it in its last step;
 * one cut at its max read words its last frame does not depend on.
 */
static uint32_t first_changed(const struct step *s, uint32_t k, uint32_t n,
			      bool whole)
{
	for (; k + 1 < n; k++) {
		const struct step *next = &s[k + 1];

		if (word(s[k].ra_at) != next->pc ||
		    (s[k].bp_at && word(s[k].bp_at) != next->bp) ||
		    (s[k].cfa_at && word(s[k].cfa_at) != next->sp))
			return k;
	}
	if (whole && k < n && s[k].ra_at && word(s[k].ra_at))
		return k;
	return n;
}

/*
 * Whether the kept walk's steps from @k on depend on the rbp it came with:
 * rbp is often a general register, different at each launch, and it only
 * matters when a step reads it before one reloads it from the stack.
 */
static bool needs_bp(const struct step *s, uint32_t k, uint32_t n)
{
	for (; k < n; k++) {
		if (s[k].uses_bp)
			return true;
		if (s[k].bp_at)
			return false;
	}
	return false;
}

struct walk {
	struct walk_log *log;   /* NULL: no reuse */
	uint32_t k[WALK_LOGS + 1];         /* a step of each kept walk */
	uintptr_t retry_sp[WALK_LOGS + 1]; /* compare no state below it */
	struct step *cur;       /* this walk's steps */
};

/*
 * At state @r, step @n of the walk: kept walk @i's frames from the same
 * state on copied into @out, and the count; -1 where they cannot be
 * used. The log becomes this walk's in place: its new steps, then the
 * kept walk's it shares (usually where they were: no copy).
 */
static int reuse_log(struct walk *w, unsigned i, const struct regs *r,
		     uint32_t n, void **out, uint32_t max)
{
	struct walk_log *l = w->log;
	struct step *p = l->s[i];
	uint32_t k, changed, take, prev_n = l->n[i];
	bool whole = l->whole[i];

	if (r->sp < w->retry_sp[i])
		return -1;
	for (k = w->k[i]; k < prev_n && p[k].sp < r->sp; k++)
		;
	w->k[i] = k;
	if (k == prev_n || p[k].sp != r->sp || p[k].pc != r->pc ||
	    (p[k].bp != r->bp && needs_bp(p, k, prev_n)))
		return -1;
	changed = first_changed(p, k, prev_n, whole);
	if (changed < prev_n) {
		w->retry_sp[i] = p[changed].sp + 1;
		return -1;
	}
	take = prev_n - k;
	if (n + take >= max) {
		take = max - n;
		whole = false;
	} else if (!whole) {
		return -1;  /* it stopped at its max; this one may go further */
	}
	for (uint32_t j = 0; j < take; j++)
		out[n + j] = (void *)p[k + j].pc;
	if (n != k)
		memmove(p + n, p + k, take * sizeof(*p));
	memcpy(p, w->cur, n * sizeof(*p));
	l->n[i] = n + take;
	l->whole[i] = whole;
	l->used[i] = ++l->clock;
	return (int)(n + take);
}

static int reuse(struct walk *w, const struct regs *r, uint32_t n,
		 void **out, uint32_t max)
{
	int got;

	if (!w->log)
		return -1;
	for (unsigned i = 0; i <= WALK_LOGS; i++)
		if (i != w->log->scratch && w->log->n[i] &&
		    (got = reuse_log(w, i, r, n, out, max)) >= 0)
			return got;
	return -1;
}

/*
 * The walk of @n steps (@whole: to the stack's end), logged in full in
 * the scratch buffer, is kept in place of the least recently used one,
 * whose buffer is the scratch now.
 */
static int walk_done(struct walk *w, uint32_t n, bool whole)
{
	struct walk_log *l = w->log;
	unsigned old = 0;

	if (!l)
		return (int)n;
	for (unsigned i = 1; i <= WALK_LOGS; i++)
		if (i != l->scratch &&
		    (old == l->scratch || l->used[i] < l->used[old]))
			old = i;
	l->n[l->scratch] = n;
	l->whole[l->scratch] = whole;
	l->used[l->scratch] = ++l->clock;
	l->scratch = old;
	return (int)n;
}

/* Log step @n's state; the reads fill in as it steps. */
static struct step *log_step(struct walk *w, uint32_t n, const struct regs *r)
{
	static _Thread_local struct step scratch;
	struct step *s = w->log ? &w->cur[n] : &scratch;

	*s = (struct step){ r->pc, r->sp, r->bp, 0, 0, 0, false };
	return s;
}

static void walk_begin(struct walk *w, struct unwinder *u, uint32_t max)
{
	struct walk_log *l = log_of(u, max);

	*w = (struct walk){ .log = l };
	if (l)
		w->cur = l->s[l->scratch];
}

/*
 * The cached walk: the count, or -1 where backtrace() must do it. Every
 * read lands in the thread's stack, above the frame being unwound.
 */
static int fast_walk(struct unwinder *u, void **out, uint32_t max)
{
	const uintptr_t hi = stack.hi;
	uintptr_t cfa, at;
	struct regs r;
	struct rule rule;
	struct step *s;
	struct walk w;
	uint32_t n = 0;
	int reused;

	egpu_unwind_regs(&r);
	if (r.sp < stack.lo || r.sp >= hi)
		return give_up(u, r.pc);
	walk_begin(&w, u, max);
	while (n < max) {
		if ((reused = reuse(&w, &r, n, out, max)) >= 0) {
			atomic_fetch_add_explicit(&u->reused, 1,
						  memory_order_relaxed);
			return reused;
		}
		s = log_step(&w, n, &r);
		out[n++] = (void *)r.pc;
		rule = rule_of(&u->rules, r.pc);
		if ((rule.kind & RULE_KIND) != RULE_STEP)
			return (rule.kind & RULE_KIND) == RULE_END ?
				walk_done(&w, n, true) : give_up(u, r.pc);
		s->uses_bp = rule.kind & (RULE_CFA_RBP | RULE_RBP_AT_RBP);
		cfa = (rule.kind & RULE_CFA_RBP ? r.bp : r.sp) +
			(uintptr_t)(intptr_t)rule.cfa_off;
		if (rule.kind & RULE_CFA_DEREF) {
			if (cfa < r.sp || cfa + 8 > hi)
				return give_up(u, r.pc);
			s->cfa_at = cfa;
			cfa = *(const uintptr_t *)cfa;
		}
		if (cfa <= r.sp || cfa > hi || (cfa & 7))
			return give_up(u, r.pc);
		if (rule.rbp_off || (rule.kind & RULE_RBP_AT_RBP)) {
			at = (rule.kind & RULE_RBP_AT_RBP ? r.bp : cfa) +
				(uintptr_t)(intptr_t)rule.rbp_off;
			if (at < r.sp || at + 8 > hi)
				return give_up(u, r.pc);
			s->bp_at = at;
			r.bp = *(const uintptr_t *)at;
		}
		at = cfa + (uintptr_t)(intptr_t)rule.ra_off;
		if (at < r.sp || at + 8 > hi)
			return give_up(u, r.pc);
		s->ra_at = at;
		r.pc = *(const uintptr_t *)at;
		r.sp = cfa;
		if (!r.pc)
			return walk_done(&w, n, true);  /* backtrace() leaves
							   out a null one too */
	}
	return walk_done(&w, n, false);
}

struct unwinder *uw_new(void)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u || rule_table_init(&u->rules)) {
		free(u);
		return NULL;
	}
	u->id = atomic_fetch_add(&unwinders, 1) + 1;
	return u;
}

void uw_free(struct unwinder *u)
{
	if (!u)
		return;
	rule_table_free(&u->rules);
	free(u);
}

int uw_walk(struct unwinder *u, void **out, uint32_t max)
{
	return u && stack_bounds() ? fast_walk(u, out, max) : -1;
}

static void count_slow(struct unwinder *u)
{
	if (u)
		atomic_fetch_add_explicit(&u->slow, 1, memory_order_relaxed);
}

void uw_counts(struct unwinder *u, struct uw_counts *out)
{
	*out = (struct uw_counts){ UINT64_MAX, 0, 0 };
	if (u)
		*out = (struct uw_counts){ atomic_load(&u->slow),
			atomic_load(&u->reused), atomic_load(&u->slow_pc) };
}

#else   /* other architectures: backtrace() */

struct unwinder *uw_new(void)
{
	return NULL;
}

void uw_free(struct unwinder *u)
{
	(void)u;
}

int uw_walk(struct unwinder *u, void **out, uint32_t max)
{
	(void)u;
	(void)out;
	(void)max;
	return -1;
}

/* Every capture is backtrace()'s: uw_counts says so (slow = UINT64_MAX). */
static void count_slow(struct unwinder *u)
{
	(void)u;
}

void uw_counts(struct unwinder *u, struct uw_counts *out)
{
	(void)u;
	*out = (struct uw_counts){ UINT64_MAX, 0, 0 };
}

#endif

uint32_t uw_capture(struct unwinder *u, void **out, uint32_t max)
{
	int n = uw_walk(u, out, max);

	if (n >= 0)
		return (uint32_t)n;
	count_slow(u);
	return (uint32_t)backtrace(out, (int)max);
}
