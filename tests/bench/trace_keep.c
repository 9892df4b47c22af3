/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <egpu.h>

#include "trace_keep.h"

int trace_keep_init(struct trace_keep *k, size_t cap)
{
	*k = (struct trace_keep){ .buf = malloc(cap), .cap = cap };
	return k->buf ? 0 : -1;
}

void trace_keep_free(struct trace_keep *k)
{
	free(k->buf);
	*k = (struct trace_keep){ 0 };
}

void trace_keep_reset(struct trace_keep *k)
{
	__atomic_store_n(&k->used, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&k->overflow, false, __ATOMIC_RELAXED);
}

/* Room for @size bytes, or NULL (overflow set). */
static uint8_t *keep_room(struct trace_keep *k, size_t size)
{
	size_t at = __atomic_fetch_add(&k->used, size, __ATOMIC_RELAXED);

	if (at + size > k->cap) {
		__atomic_store_n(&k->overflow, true, __ATOMIC_RELAXED);
		return NULL;
	}
	return k->buf + at;
}

void trace_keep_chunk(struct trace_keep *k, const void *data, size_t size)
{
	uint8_t *to = keep_room(k, size);

	if (to)
		memcpy(to, data, size);
}

void trace_keep_span(struct trace_keep *k, const void *data, size_t size)
{
	struct egpu_rec_hdr h = { (uint32_t)size, EGPU_REC_COMMIT | EGPU_REC_SPAN };
	uint8_t *to = keep_room(k, sizeof(h) + ((size + 7) & ~(size_t)7));

	if (!to)
		return;
	memcpy(to, &h, sizeof(h));
	memcpy(to + sizeof(h), data, size);
}

/* Counts per element of each expected array, as the check goes. */
struct tally {
	const struct trace_expect *ex;
	size_t n;
	uint64_t records;
	uint8_t *count[TRACE_EXPECT_MAX];
	char *why;
	size_t why_len;
};

/* One lane access: in an expected array, as expected; else false and why. */
static bool tally_lane(struct tally *t, const struct egpu_warp_rec *rec,
		       uint64_t addr)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct trace_expect *e = &t->ex[i];
		uint64_t off = addr - e->base;

		if (addr < e->base || off >= e->elems * e->size)
			continue;
		if (off % e->size || rec->size != e->size || rec->kind != e->kind ||
		    t->count[i][off / e->size] == UINT8_MAX) {
			snprintf(t->why, t->why_len,
				 "site %u: %u-byte access of kind %u at 0x%llx in array %zu (element size %u, kind %u)",
				 rec->site, rec->size, rec->kind,
				 (unsigned long long)addr, i, e->size, e->kind);
			return false;
		}
		t->count[i][off / e->size]++;
		return true;
	}
	snprintf(t->why, t->why_len, "site %u: an access at 0x%llx outside the kernel's arrays",
		 rec->site, (unsigned long long)addr);
	return false;
}

/* Every lane of every record of span @data; the lanes, or 0. */
static uint64_t tally_span(struct tally *t, const void *data, size_t size)
{
	struct egpu_span_iter it;
	struct egpu_warp_rec rec;
	uint64_t lanes = 0;
	int got = egpu_span_begin(&it, data, size, NULL);

	while (!got && (got = egpu_span_next(&it, &rec)) == 1) {
		t->records++;
		for (uint32_t m = rec.mask; m; m &= m - 1, lanes++)
			if (!tally_lane(t, &rec, rec.addr[__builtin_ctz(m)]))
				return 0;
		got = 0;
	}
	if (got < 0) {
		snprintf(t->why, t->why_len, "%s", egpu_errmsg());
		return 0;
	}
	return lanes;
}

/* Each element accessed its times: true, else false and why. */
static bool tally_complete(struct tally *t)
{
	for (size_t i = 0; i < t->n; i++)
		for (uint64_t j = 0; j < t->ex[i].elems; j++)
			if (t->count[i][j] != t->ex[i].times) {
				snprintf(t->why, t->why_len,
					 "element %llu of array %zu accessed %u times, not %u",
					 (unsigned long long)j, i, t->count[i][j],
					 t->ex[i].times);
				return false;
			}
	return true;
}

static uint64_t tally_all(struct tally *t, const struct trace_keep *k)
{
	struct egpu_chunk_iter it = { k->buf, k->buf + k->used };
	struct egpu_chunk_rec rec;
	uint64_t lanes = 0, got;
	int more;

	if (k->overflow) {
		snprintf(t->why, t->why_len, "more than the %zu bytes kept were delivered",
			 k->cap);
		return 0;
	}
	while ((more = egpu_chunk_next(&it, &rec)) == 1) {
		if (!(rec.flags & EGPU_REC_SPAN))
			continue;
		if (!(got = tally_span(t, rec.data, rec.size)))
			return 0;
		lanes += got;
	}
	if (more < 0) {
		snprintf(t->why, t->why_len, "%s", egpu_errmsg());
		return 0;
	}
	return tally_complete(t) ? lanes : 0;
}

uint64_t trace_keep_check(const struct trace_keep *k,
			  const struct trace_expect *ex, size_t n,
			  uint64_t *records, char *why, size_t why_len)
{
	struct tally t = { ex, n, 0, { NULL }, why, why_len };
	uint64_t lanes = 0;
	size_t i;

	for (i = 0; i < n && i < TRACE_EXPECT_MAX; i++)
		if (!(t.count[i] = calloc(ex[i].elems, 1)))
			break;
	if (n > TRACE_EXPECT_MAX || i < n)
		snprintf(why, why_len, "%s", n > TRACE_EXPECT_MAX ?
			 "too many arrays" : "out of memory");
	else
		lanes = tally_all(&t, k);
	for (i = 0; i < n && i < TRACE_EXPECT_MAX; i++)
		free(t.count[i]);
	*records = t.records;
	return lanes;
}
