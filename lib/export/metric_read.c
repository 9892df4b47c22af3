/* SPDX-License-Identifier: MIT */
/*
 * A map read into series: every key walked with egpu_map_next_key, each
 * value read (per-thread and per-SM copies summed) with
 * egpu_map_lookup_sum, whose copies run on the map's own non-blocking
 * stream and so never wait for the application's kernels. Keys with the
 * same label are merged, zero series dropped, the largest top_n kept and
 * the rest summed into one "other".
 */
#include <stdlib.h>
#include <string.h>

#include "export/export.h"

/* One key's contribution before merging. */
struct entry {
	uint64_t id;
	uint32_t bucket;
	uint64_t value;
};

struct entries {
	struct entry *v;
	size_t n, cap;
};

static int entries_push(struct entries *e, struct entry x)
{
	if (!ARRAY_GROW(e->v, e->cap, e->n, 256))
		return err_set(EGPU_ENOMEM, "metrics: out of memory");
	e->v[e->n++] = x;
	return 0;
}

static uint64_t read_uint(const uint8_t *p, uint32_t size, bool sign)
{
	uint32_t w;
	uint64_t d;

	if (size == 8) {
		memcpy(&d, p, 8);
		return d;
	}
	memcpy(&w, p, 4);
	return sign ? (uint64_t)(int64_t)(int32_t)w : w;
}

/* What key @key and value @val of @mt add. */
static struct entry entry_of(const struct metric *mt, const uint8_t *key,
			     const uint8_t *val)
{
	uint32_t ks = egpu_map_key_size(mt->map);
	struct entry e = {
		.value = read_uint(val, egpu_map_value_size(mt->map),
				   mt->kind == EGPU_METRIC_GAUGE),
	};
	uint32_t half;

	if (mt->kind == EGPU_METRIC_HISTOGRAM) {
		bool labelled = mt->key != EGPU_METRIC_KEY_NONE;

		memcpy(&e.bucket, key + (labelled ? 4 : 0), 4);
		if (labelled) {
			memcpy(&half, key, 4);
			e.id = half;
		}
		if (e.bucket >= HIST_BUCKETS)
			e.bucket = HIST_BUCKETS - 1;
	} else if (mt->key != EGPU_METRIC_KEY_NONE) {
		e.id = read_uint(key, ks, false);
	}
	return e;
}

/* Every key of @mt's map into @e. */
static int read_entries(const struct metric *mt, struct entries *e)
{
	uint32_t ks = egpu_map_key_size(mt->map);
	uint8_t *buf = malloc(2 * (size_t)ks + 8);
	uint8_t *key = buf, *next = buf + ks, *val = buf + 2 * (size_t)ks;
	int err;

	if (!buf)
		return err_set(EGPU_ENOMEM, "metrics: out of memory");
	for (bool first = true;; first = false) {
		uint8_t *t;

		err = egpu_map_next_key(mt->map, first ? NULL : key, next);
		if (err)
			break;
		err = egpu_map_lookup_sum(mt->map, next, val);
		if (!err) {
			struct entry x = entry_of(mt, next, val);

			/* one-series maps keep their series at 0 */
			err = x.value || (mt->key == EGPU_METRIC_KEY_NONE &&
					  !e->n) ? entries_push(e, x) : 0;
		} else if (err == EGPU_ENOENT) {
			err = 0; /* deleted since next_key found it */
		}
		if (err)
			break;
		t = key;
		key = next;
		next = t;
	}
	free(buf);
	return err == EGPU_ENOENT ? 0 : err;
}

static int by_id(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* Series of @mt from the entries, sorted by id, merged by id. */
static int merge(const struct metric *mt, struct entries *e,
		 struct series **out, size_t *cnt)
{
	bool hist = mt->kind == EGPU_METRIC_HISTOGRAM;
	struct series *s;
	size_t n = 0;

	qsort(e->v, e->n, sizeof(*e->v), by_id);
	s = calloc(e->n ? e->n : 1, sizeof(*s));
	if (!s)
		return err_set(EGPU_ENOMEM, "metrics: out of memory");
	for (size_t i = 0; i < e->n; i++) {
		if (!n || s[n - 1].id != e->v[i].id) {
			s[n].id = e->v[i].id;
			if (hist && !(s[n].buckets = calloc(HIST_BUCKETS, 8))) {
				series_free(s, n);
				return err_set(EGPU_ENOMEM, "metrics: out of "
					       "memory");
			}
			n++;
		}
		s[n - 1].value += e->v[i].value;
		if (hist)
			s[n - 1].buckets[e->v[i].bucket] += e->v[i].value;
	}
	*out = s;
	*cnt = n;
	return 0;
}

/* Largest first: counts as unsigned, gauges by magnitude. */
static uint64_t weight(const struct series *s, bool sign)
{
	int64_t v = (int64_t)s->value;

	return sign && v < 0 ? (uint64_t)0 - (uint64_t)v : s->value;
}

static int by_weight(const void *a, const void *b)
{
	uint64_t x = ((const struct series *)a)->weight;
	uint64_t y = ((const struct series *)b)->weight;

	return (x < y) - (x > y);
}

/* Keep the top @top series; fold the rest into one "other". */
static void fold_other(const struct metric *mt, struct series *s, size_t *cnt)
{
	size_t top = mt->top_n;

	for (size_t i = 0; i < *cnt; i++)
		s[i].weight = weight(&s[i], mt->kind == EGPU_METRIC_GAUGE);
	qsort(s, *cnt, sizeof(*s), by_weight);
	if (*cnt <= top + 1)
		return;
	s[top].other = true;
	for (size_t i = top + 1; i < *cnt; i++) {
		s[top].value += s[i].value;
		for (size_t b = 0; s[i].buckets && b < HIST_BUCKETS; b++)
			s[top].buckets[b] += s[i].buckets[b];
		free(s[i].buckets);
	}
	*cnt = top + 1;
}

int metric_read(const struct metric *mt, struct series **out, size_t *cnt)
{
	struct entries e = { 0 };
	int err = read_entries(mt, &e);

	if (!err)
		err = merge(mt, &e, out, cnt);
	free(e.v);
	if (err)
		return err;
	if (mt->key != EGPU_METRIC_KEY_NONE)
		fold_other(mt, *out, cnt);
	return 0;
}

void series_free(struct series *s, size_t cnt)
{
	for (size_t i = 0; s && i < cnt; i++)
		free(s[i].buckets);
	free(s);
}
