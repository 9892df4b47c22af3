/* SPDX-License-Identifier: MIT */
/*
 * A bad access in words, relative to the allocations the table knows:
 * "4 bytes past the end of a 4,194,304-byte cudaMalloc allocation". The
 * table may have moved on since the access (the report comes later), so
 * this is the best account the host has, not the probe's verdict.
 */
#include <inttypes.h>
#include <stdio.h>

#include "memcheck/memcheck_origin.h"
#include "memcheck/memcheck_table_impl.h"

/* An allocation named, with where it was made. */
#define MADE_LEN 192
#define WHAT_LEN (MADE_LEN + 96)

const char *mc_commas(uint64_t v, char buf[32])
{
	char raw[24];
	int n = snprintf(raw, sizeof(raw), "%" PRIu64, v), o = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = raw[i];
	}
	buf[o] = '\0';
	return buf;
}

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* "a 4,096-byte cudaMalloc allocation", where stacks are kept followed
 * by " made at run_case (from main)" */
static void name_rec(const struct mc_table *t, const struct mc_rec *r,
		     char *buf, size_t n)
{
	char num[32], made[MADE_LEN] = "";

	if (t->origins)
		mc_origin_words(t->origins, r->origin, made, sizeof(made));
	snprintf(buf, n, "a %s-byte %s allocation%s",
		 mc_commas(r->end - r->base, num), mc_kind_name(r->kind), made);
}

/* @addr is inside @r (live or freed, per @freed). */
static void inside(const struct mc_table *t, const struct mc_rec *r,
		   uint64_t addr, uint32_t size, bool freed, char *buf, size_t n)
{
	char what[WHAT_LEN], off[32], over[32];
	uint64_t last = addr + size;

	name_rec(t, r, what, sizeof(what));
	mc_commas(addr - r->base, off);
	if (freed || r->freeing)
		snprintf(buf, n, "at offset %s of %s that was freed (use after free)",
			 off, what);
	else if (last > r->end)
		snprintf(buf, n, "at offset %s of %s, running %s byte%s past its end",
			 off, what, mc_commas(last - r->end, over),
			 plural(last - r->end));
	else
		snprintf(buf, n, "at offset %s of %s not yet live in the kernel's stream order",
			 off, what);
}

/* The newest freed allocation holding @addr, NULL: none remembered. */
static const struct mc_rec *freed_at(const struct mc_table *t, uint64_t addr)
{
	size_t have = t->nfreed < MC_HISTORY ? t->nfreed : MC_HISTORY;

	for (size_t k = 1; k <= have; k++) {
		const struct mc_rec *r = &t->freed[(t->nfreed - k) % MC_HISTORY];

		if (addr >= r->base && addr < r->end)
			return r;
	}
	return NULL;
}

/* The record holding @addr, preferring a live one; NULL: none. */
static const struct mc_rec *holder(const struct mc_table *t, uint64_t addr)
{
	const struct mc_rec *found = NULL;

	for (size_t i = 0; i < t->nrec && t->recs[i].base <= addr; i++)
		if (addr < t->recs[i].end && (!found || found->freeing))
			found = &t->recs[i];
	return found;
}

/* The allocations nearest below and above @addr (none holds it). */
static void neighbours(const struct mc_table *t, uint64_t addr,
		       const struct mc_rec **below, const struct mc_rec **above)
{
	size_t i = mc_rec_lower(t, addr + 1);

	*below = NULL;
	*above = i < t->nrec ? &t->recs[i] : NULL;
	for (size_t j = 0; j < i; j++) /* the highest end below @addr */
		if (!*below || t->recs[j].end > (*below)->end)
			*below = &t->recs[j];
}

/* How far @addr is from the nearest live allocation's edge. */
static uint64_t distance(const struct mc_table *t, uint64_t addr)
{
	const struct mc_rec *below, *above;
	uint64_t d = UINT64_MAX;

	neighbours(t, addr, &below, &above);
	if (below)
		d = addr - below->end;
	if (above && above->base - addr < d)
		d = above->base - addr;
	return d;
}

/* The nearest allocation below or above @addr, in words. */
static void nearest(const struct mc_table *t, uint64_t addr, char *buf,
		    size_t n)
{
	const struct mc_rec *below, *above;
	char what[WHAT_LEN], d[32];

	neighbours(t, addr, &below, &above);
	if (below && (!above || addr - below->end <= above->base - addr)) {
		name_rec(t, below, what, sizeof(what));
		if (addr == below->end)
			snprintf(buf, n, "just past the end of %s", what);
		else
			snprintf(buf, n, "%s byte%s past the end of %s",
				 mc_commas(addr - below->end, d),
				 plural(addr - below->end), what);
	} else if (above) {
		name_rec(t, above, what, sizeof(what));
		snprintf(buf, n, "%s byte%s before the start of %s",
			 mc_commas(above->base - addr, d),
			 plural(above->base - addr), what);
	} else {
		snprintf(buf, n, "not near any allocation (none is live)");
	}
}

void mc_table_describe(struct mc_table *t, uint64_t addr, uint32_t size,
		       char *buf, size_t n)
{
	const struct mc_rec *r;

	if (!n)
		return;
	pthread_mutex_lock(&t->lock);
	if ((r = holder(t, addr)))
		inside(t, r, addr, size, false, buf, n);
	else if ((r = freed_at(t, addr)) && addr - r->base < distance(t, addr))
		inside(t, r, addr, size, true, buf, n); /* the likelier story */
	else
		nearest(t, addr, buf, n);
	pthread_mutex_unlock(&t->lock);
}
