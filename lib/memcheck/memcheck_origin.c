/* SPDX-License-Identifier: MIT */
/*
 * Allocation call stacks (memcheck_origin.h). backtrace() takes a few
 * microseconds, once per allocation call the hooks see; a stack seen
 * before is kept once, so a loop allocating from one place keeps one.
 */
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memcheck/memcheck_origin.h"
#include "core/core.h"
#include "trace/symbols.h"

#define ORIGIN_FRAMES 32 /* taken; the hooks and the CUDA libraries first */
#define ORIGIN_SHOWN 3   /* named */

struct stack {
	uint32_t n;
	void *pc[ORIGIN_FRAMES];
};

struct mc_origins {
	pthread_mutex_t lock;
	struct stack *stacks;
	size_t n, cap;
	struct ptrmap seen;        /* the frames' hash -> index + 1 */
	struct strpool names;
	struct symbolizer *sym;    /* made at the first report */
};

struct mc_origins *mc_origins_new(void)
{
	struct mc_origins *o = calloc(1, sizeof(*o));

	if (o)
		pthread_mutex_init(&o->lock, NULL);
	return o;
}

void mc_origins_free(struct mc_origins *o)
{
	if (!o)
		return;
	sym_free(o->sym);
	strpool_free(&o->names);
	ptrmap_free(&o->seen);
	free(o->stacks);
	pthread_mutex_destroy(&o->lock);
	free(o);
}

/* Never 0 (a ptrmap key). */
static uintptr_t stack_hash(const struct stack *s)
{
	uint64_t h = s->n;

	for (uint32_t i = 0; i < s->n; i++)
		h = hash_word((uintptr_t)s->pc[i] ^ (uintptr_t)h);
	return (uintptr_t)h | 1;
}

/* @s's index + 1 among those kept, kept now if new; 0: no memory. */
static uint32_t keep(struct mc_origins *o, const struct stack *s)
{
	uintptr_t h = stack_hash(s);
	uintptr_t at = (uintptr_t)ptrmap_get(&o->seen, h);

	if (at && !memcmp(&o->stacks[at - 1], s, sizeof(*s)))
		return (uint32_t)at;
	if (o->n == UINT32_MAX - 1 ||
	    !ARRAY_GROW(o->stacks, o->cap, o->n, 64))
		return 0;
	o->stacks[o->n++] = *s;
	if (!at) /* a colliding hash keeps its first stack's entry */
		(void)ptrmap_put(&o->seen, h, (void *)(uintptr_t)o->n);
	return (uint32_t)o->n;
}

uint32_t mc_origin_take(struct mc_origins *o)
{
	struct stack s = { 0 };
	uint32_t id;

	s.n = (uint32_t)backtrace(s.pc, ORIGIN_FRAMES);
	pthread_mutex_lock(&o->lock);
	id = keep(o, &s);
	pthread_mutex_unlock(&o->lock);
	return id;
}

/* Whether the frame at @pc is libegpu's or the CUDA libraries' and
 * runtime's, which the allocation went through. */
static bool passed_through(struct symbolizer *sym, uintptr_t pc)
{
	enum sym_role role = sym_role(sym, pc);
	const char *name;

	if (role == SYM_SELF || role == SYM_CUDA)
		return true;
	name = sym_name(sym, pc);
	return name && sym_cuda_runtime(name, NULL);
}

static void put_words(struct mc_origins *o, const struct stack *s,
		      char *buf, size_t n)
{
	uint32_t i = 0, shown = 0;
	size_t at = 0;

	/* before libegpu's first frame, the capture's own (a sanitizer's
	 * backtrace()) */
	while (i < s->n && sym_role(o->sym, sym_call_site(s->pc, i)) != SYM_SELF)
		i++;
	while (i < s->n && passed_through(o->sym, sym_call_site(s->pc, i)))
		i++;
	for (; i < s->n && shown < ORIGIN_SHOWN && at < n; i++, shown++) {
		uintptr_t pc = sym_call_site(s->pc, i);
		const char *name = sym_name(o->sym, pc);

		if (!name || sym_startup(o->sym, pc))
			break;
		at += (size_t)snprintf(buf + at, n - at, "%s%s",
				       shown ? (shown == 1 ? " (from " : ", from ")
					     : " made at ", name);
	}
	if (shown > 1 && at < n)
		at += (size_t)snprintf(buf + at, n - at, ")");
	if (at >= n && n > 4) /* cut: say so */
		memcpy(buf + n - 4, "...", 4);
}

void mc_origin_words(struct mc_origins *o, uint32_t id, char *buf,
		     size_t n)
{
	if (!n)
		return;
	*buf = '\0';
	pthread_mutex_lock(&o->lock);
	if (!o->sym)
		o->sym = sym_new(&o->names);
	if (o->sym && id && id <= o->n)
		put_words(o, &o->stacks[id - 1], buf, n);
	pthread_mutex_unlock(&o->lock);
}
