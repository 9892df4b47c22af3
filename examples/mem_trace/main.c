// SPDX-License-Identifier: MIT
/*
 * mem_trace: the global memory accesses of a kernel, per instruction
 * (site). First counted on the GPU with warp-aggregated counters
 * (mem_count.bpf.c), then traced to the host one record per warp-level
 * access (mem_trace.bpf.c), from which the host measures coalescing (32-byte
 * sectors touched per warp access, against the fewest possible) and the
 * bandwidth the kernel reached over time; then traced again with the ring
 * in GPU memory (mem_trace_dev.bpf.c), drained by the copy engine, and
 * with libegpu's compressed warp records (mem_trace_warp.bpf.c:
 * bpf_egpu_trace_warp, one reservation per warp access in its SM's shard),
 * then as the complete trace on spans (mem_trace_span.bpf.c:
 * bpf_egpu_trace_span, compact records published once per span, each
 * span decoded with egpu_span_next), and last the same spans written by
 * the splicer's trace mode into that object's ring, no probe attached
 * (egpu_mem_trace_enable: the common case stored at the access).
 * With --values, instead: each global access of a small launch with the
 * value it loads or stores (mem_trace_values.bpf.c: bpf_egpu_read_mem,
 * bpf_egpu_read_value).
 *
 *   mem_trace [--values] [--check]
 *   mem_trace --read FILE   (a trace of `egpu attach --trace FILE`)
 *
 * --check: every mode must see exactly what add_and_gather is known to
 * access: every element of a, b and src loaded once, of c and dst stored
 * once, 4 bytes each, from five sites; no record lost; with --values, each
 * value the one the host put there or the kernel wrote.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <egpu/ctx.h>

#include "app.h"
#include "mem_trace.h"
#include "ring_thread.h"

#define N (1 << 18)
#define STRIDE 33 /* odd: the gather still reads every element once */
#define BLOCK 256
#define WINDOWS 8
#define SECTOR 32

enum { A, B, C, SRC, DST, ARRAYS };

static const char *const array_names[ARRAYS] = { "a", "b", "c", "src", "dst" };
static const uint16_t array_kinds[ARRAYS] = {
	EGPU_MEM_LOAD, EGPU_MEM_LOAD, EGPU_MEM_STORE, EGPU_MEM_LOAD, EGPU_MEM_STORE,
};

struct arrays {
	float *dev[ARRAYS];
	float *host[ARRAYS];
};

/* Per site, from the trace. */
struct site_trace {
	uint64_t warp_accesses, lanes, bytes, sectors, ideal;
	int array; /* --check: the array its addresses fall in; -1 none, -2 several */
	uint16_t kind;
};

struct point {
	uint64_t ns, bytes;
};

struct access;

struct trace {
	struct site_trace site[MT_MAX_SITES];
	struct point *points; /* one per record, for bandwidth over time */
	size_t point_cnt, point_cap;
	uint8_t *hits[ARRAYS]; /* accesses per element, saturating */
	uint64_t records, bad;
	const struct arrays *arr;
	bool (*decode)(const void *data, size_t size, struct access *a);
};

/* Per site, from the counters. */
struct site_count {
	uint64_t accesses, bytes;
};

static void fill_arrays(struct arrays *arr)
{
	for (int k = 0; k < ARRAYS; k++) {
		arr->host[k] = malloc(N * sizeof(float));
		if (!arr->host[k])
			abort();
		for (int i = 0; i < N; i++)
			arr->host[k][i] = k == C || k == DST ? 0 : (float)(i % 1000) + k;
		CUDA_CHECK(cudaMalloc((void **)&arr->dev[k], N * sizeof(float)));
		CUDA_CHECK(cudaMemcpy(arr->dev[k], arr->host[k], N * sizeof(float),
				      cudaMemcpyHostToDevice));
	}
}

static void free_arrays(struct arrays *arr)
{
	for (int k = 0; k < ARRAYS; k++) {
		cudaFree(arr->dev[k]);
		free(arr->host[k]);
	}
}

/* add_and_gather over the first @n elements of the arrays. */
static float launch(struct app *app, const struct arrays *arr, int n)
{
	cudaKernel_t k = app_kernel(app_load_instrumented(app), "add_and_gather");
	int stride = STRIDE;
	void *args[] = { (void *)&arr->dev[A], (void *)&arr->dev[B],
			 (void *)&arr->dev[C], (void *)&arr->dev[SRC],
			 (void *)&arr->dev[DST], &n, &stride };

	return app_time_launch(k, (dim3){ (n + BLOCK - 1) / BLOCK, 1, 1 },
			       (dim3){ BLOCK, 1, 1 }, args);
}

static const char *kind_name(uint16_t kind)
{
	static const char *const names[] = { "?", "load", "store", "atomic", "async" };

	return kind < 5 ? names[kind] : "?";
}

/* The site's instruction on one line, blanks squeezed (a static buffer). */
static const char *site_text(const struct app *app, uint32_t s)
{
	static char buf[128];
	const char *p = s < app->report.mem_site_cnt ? app->report.mem_sites[s].text : "?";
	size_t n = 0;

	for (; *p && n + 1 < sizeof(buf); p++)
		if (!isspace((unsigned char)*p))
			buf[n++] = *p;
		else if (n && buf[n - 1] != ' ')
			buf[n++] = ' ';
	buf[n] = '\0';
	return buf;
}

/* Sites a report can name, within the counters' reach. */
static uint32_t site_cnt(const struct app *app)
{
	uint32_t n = app->report.mem_site_cnt;

	return n < MT_MAX_SITES ? n : MT_MAX_SITES;
}

static void read_counts(struct app *app, struct site_count *out)
{
	egpu_map *m = egpu_obj_map(app->obj, "counts");
	static struct mt_site_counts v;

	EGPU_CHECK(m);
	for (uint32_t s = 0; s < site_cnt(app); s++) {
		EGPU_CHECK(!egpu_map_lookup(m, &s, &v));
		out[s] = (struct site_count){ 0 };
		for (int i = 0; i < MT_SLOTS; i++)
			out[s].accesses += v.slot[i].accesses;
		/* Sizes known only at run time (bulk copies) are 0 here. */
		out[s].bytes = out[s].accesses * app->report.mem_sites[s].size;
	}
}

static void print_counts(const struct app *app, const struct site_count *c,
			 float ms)
{
	printf("\ncounting (warp-aggregated), kernel %.3f ms:\n", ms);
	printf("site  %-40s %10s %12s\n", "instruction", "accesses", "bytes");
	for (uint32_t s = 0; s < site_cnt(app); s++)
		if (c[s].accesses)
			printf("%4u  %-40.40s %10llu %12llu\n", s, site_text(app, s),
			       (unsigned long long)c[s].accesses,
			       (unsigned long long)c[s].bytes);
}

/* Which array, and which element of it, @addr is; -1 if none. */
static int locate(const struct arrays *arr, uint64_t addr, size_t *idx)
{
	for (int k = 0; k < ARRAYS; k++) {
		uint64_t base = (uintptr_t)arr->dev[k];

		if (addr >= base && addr < base + N * sizeof(float) &&
		    (addr - base) % sizeof(float) == 0) {
			*idx = (addr - base) / sizeof(float);
			return k;
		}
	}
	return -1;
}

static void check_address(struct trace *t, struct site_trace *st, uint64_t addr)
{
	size_t idx;
	int k = locate(t->arr, addr, &idx);

	if (k < 0) {
		t->bad++;
		return;
	}
	if (t->hits[k][idx] < 255)
		t->hits[k][idx]++;
	if (st->array == -1)
		st->array = k;
	else if (st->array != k)
		st->array = -2;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Distinct 32-byte sectors under the lanes' accesses. */
static uint64_t count_sectors(const uint64_t *addr, int lanes, uint32_t size)
{
	uint64_t sec[2 * MT_WARP];
	int n = 0;
	uint64_t distinct = 0;

	for (int i = 0; i < lanes; i++) {
		sec[n++] = addr[i] / SECTOR;
		if ((addr[i] + size - 1) / SECTOR != addr[i] / SECTOR)
			sec[n++] = (addr[i] + size - 1) / SECTOR;
	}
	qsort(sec, (size_t)n, sizeof(sec[0]), cmp_u64);
	for (int i = 0; i < n; i++)
		distinct += !i || sec[i] != sec[i - 1];
	return distinct;
}

static void add_point(struct trace *t, uint64_t ns, uint64_t bytes)
{
	if (t->point_cnt == t->point_cap) {
		t->point_cap = t->point_cap ? 2 * t->point_cap : 4096;
		t->points = realloc(t->points, t->point_cap * sizeof(*t->points));
		if (!t->points)
			abort();
	}
	t->points[t->point_cnt++] = (struct point){ ns, bytes };
}

/* What a record says, in either format. */
struct access {
	uint64_t ns;
	uint32_t site, size;
	uint16_t kind;
	int lanes;
	uint64_t addr[MT_WARP];
};

/* The lanes of @mask from @leader on, affine from @base by @stride. */
static void affine_lanes(struct access *a, uint32_t mask, uint64_t base,
			 int64_t stride)
{
	uint32_t leader = (uint32_t)__builtin_ctz(mask);

	a->lanes = 0;
	for (uint32_t i = 0; i < MT_WARP; i++)
		if (mask & (1u << i))
			a->addr[a->lanes++] = base + (uint64_t)((int64_t)(i - leader) * stride);
}

/* mem_trace.bpf.c's records; false if malformed. */
static bool decode_mt(const void *data, size_t size, struct access *a)
{
	const struct mt_warp_addrs *full = data;
	const struct mt_warp_access *h = data;

	if (size < sizeof(*h) || size != (h->affine ? sizeof(*h) : sizeof(*full)) ||
	    !h->mask)
		return false;
	*a = (struct access){ .ns = h->ns, .site = h->site, .size = h->size,
			      .kind = h->kind };
	affine_lanes(a, h->mask, h->base, h->size);
	if (!h->affine)
		for (uint32_t i = 0, k = 0; i < MT_WARP; i++)
			if (h->mask & (1u << i))
				a->addr[k++] = full->addr[i];
	return true;
}

/* bpf_egpu_trace_warp's records (mem_trace_warp.bpf.c); false if malformed. */
static bool decode_warp(const void *data, size_t size, struct access *a)
{
	const struct egpu_warp_access *h = data;
	const uint64_t *addrs = (const uint64_t *)(h + 1);
	int lanes;

	if (size < sizeof(*h) || !h->mask)
		return false;
	lanes = __builtin_popcount(h->mask);
	if (size != sizeof(*h) + (h->flags & EGPU_WARP_AFFINE ? 0 : 8u * lanes))
		return false;
	*a = (struct access){ .ns = h->tag, .site = h->site, .size = h->size,
			      .kind = h->kind };
	affine_lanes(a, h->mask, h->base, h->stride);
	if (!(h->flags & EGPU_WARP_AFFINE))
		memcpy(a->addr, addrs, 8u * lanes);
	return true;
}

/* One warp access @a of the trace counted, its addresses checked. */
static void account(struct trace *t, const struct access *a)
{
	struct site_trace *st;

	if (a->site >= MT_MAX_SITES) {
		t->bad++;
		return;
	}
	st = &t->site[a->site];
	st->warp_accesses++;
	st->lanes += (uint64_t)a->lanes;
	st->bytes += (uint64_t)a->lanes * a->size;
	st->sectors += count_sectors(a->addr, a->lanes, a->size);
	st->ideal += ((uint64_t)a->lanes * a->size + SECTOR - 1) / SECTOR;
	st->kind = a->kind;
	for (int i = 0; t->arr && i < a->lanes; i++) /* --read: no arrays */
		check_address(t, st, a->addr[i]);
	if (a->ns) /* spans carry no time */
		add_point(t, a->ns, (uint64_t)a->lanes * a->size);
}

static int on_record(void *user, const void *data, size_t size)
{
	struct trace *t = user;
	struct access a;

	t->records++;
	if (!t->decode(data, size, &a))
		t->bad++;
	else
		account(t, &a);
	return 0;
}

/* A span of bpf_egpu_trace_span (mem_trace_span.bpf.c): its records. */
static int on_span(void *user, const void *data, size_t size)
{
	struct trace *t = user;
	struct egpu_span_iter it;
	struct egpu_warp_rec rec;
	int got = egpu_span_begin(&it, data, size, NULL);

	while (got >= 0 && (got = egpu_span_next(&it, &rec)) == 1) {
		struct access a = { .site = rec.site, .size = rec.size,
				    .kind = rec.kind };

		for (uint32_t m = rec.mask; m; m &= m - 1)
			a.addr[a.lanes++] = rec.addr[__builtin_ctz(m)];
		t->records++;
		account(t, &a);
		got = 0; /* on to the next record (1 would end the loop) */
	}
	if (got < 0)
		t->bad++;
	return 0;
}

static int cmp_point(const void *a, const void *b)
{
	return cmp_u64(&((const struct point *)a)->ns, &((const struct point *)b)->ns);
}

/* Bytes accessed per window of the traced run, as GB/s. */
static void print_bandwidth(struct trace *t)
{
	uint64_t first, span, bytes[WINDOWS] = { 0 };

	if (!t->point_cnt)
		return;
	qsort(t->points, t->point_cnt, sizeof(t->points[0]), cmp_point);
	first = t->points[0].ns;
	span = t->points[t->point_cnt - 1].ns - first + 1;
	for (size_t i = 0; i < t->point_cnt; i++)
		bytes[(t->points[i].ns - first) * WINDOWS / span] += t->points[i].bytes;
	printf("\neffective bandwidth while traced (%.1f us of accesses):\n", span / 1e3);
	for (int w = 0; w < WINDOWS; w++)
		printf("  %8.1f us  %10llu bytes  %8.2f GB/s\n", w * span / 1e3 / WINDOWS,
		       (unsigned long long)bytes[w],
		       bytes[w] / (span / (double)WINDOWS));
}

static void print_trace(const struct app *app, const struct trace *t,
			const char *where, float ms, uint64_t drops)
{
	printf("\ntracing (one record per warp-level access, ring in %s memory), "
	       "kernel %.3f ms, %llu records, %llu dropped:\n", where, ms,
	       (unsigned long long)t->records, (unsigned long long)drops);
	printf("site  %-6s %-36s %9s %11s %10s %8s\n", "kind", "instruction",
	       "accesses", "bytes", "sectors/wa", "ideal");
	for (uint32_t s = 0; s < site_cnt(app); s++) {
		const struct site_trace *st = &t->site[s];

		if (!st->warp_accesses)
			continue;
		printf("%4u  %-6s %-36.36s %9llu %11llu %10.2f %8.2f\n", s,
		       kind_name(st->kind), site_text(app, s),
		       (unsigned long long)st->lanes, (unsigned long long)st->bytes,
		       (double)st->sectors / st->warp_accesses,
		       (double)st->ideal / st->warp_accesses);
	}
}

static int fail(const char *what, uint32_t site)
{
	fprintf(stderr, "CHECK FAILED: site %u: %s\n", site, what);
	return 1;
}

/* Five sites, each N lanes of 4 bytes; all others silent. */
static int check_counts(const struct app *app, const struct site_count *c)
{
	uint32_t busy = 0;

	for (uint32_t s = 0; s < site_cnt(app); s++) {
		if (!c[s].accesses)
			continue;
		busy++;
		if (c[s].accesses != N || c[s].bytes != 4ull * N)
			return fail("counted accesses or bytes differ from the kernel's", s);
	}
	return busy == ARRAYS ? 0 : fail("not five sites counted", busy);
}

static int check_site(const struct trace *t, const struct site_count *c,
		      uint32_t s)
{
	const struct site_trace *st = &t->site[s];

	if (st->lanes != c[s].accesses)
		return fail("trace and counters disagree", s);
	if (!st->lanes)
		return 0;
	if (st->array < 0)
		return fail("addresses outside one array", s);
	if (st->kind != array_kinds[st->array])
		return fail("wrong access kind", s);
	if (st->array != SRC && st->sectors != st->ideal)
		return fail("coalesced site not at the ideal sector count", s);
	if (st->array == SRC && st->sectors < 16 * st->warp_accesses)
		return fail("the gather looks coalesced", s);
	return 0;
}

static int check_trace(const struct app *app, const struct trace *t,
		       const struct site_count *c, uint64_t drops)
{
	if (drops || t->bad)
		return fail("records dropped or malformed", 0);
	for (uint32_t s = 0; s < site_cnt(app); s++)
		if (check_site(t, c, s))
			return 1;
	for (int k = 0; k < ARRAYS; k++)
		for (size_t i = 0; i < N; i++)
			if (t->hits[k][i] != 1) {
				fprintf(stderr, "CHECK FAILED: %s[%zu] accessed %u times\n",
					array_names[k], i, t->hits[k][i]);
				return 1;
			}
	return 0;
}

/* The instrumented kernel computed what the plain one would have. */
static int check_results(const struct arrays *arr)
{
	float *c = malloc(N * sizeof(float)), *d = malloc(N * sizeof(float));
	int bad = 0;

	if (!c || !d)
		abort();
	CUDA_CHECK(cudaMemcpy(c, arr->dev[C], N * sizeof(float), cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(d, arr->dev[DST], N * sizeof(float), cudaMemcpyDeviceToHost));
	for (long long i = 0; i < N && !bad; i++)
		bad = c[i] != arr->host[A][i] + arr->host[B][i] ||
		      d[i] != arr->host[SRC][i * STRIDE % N];
	free(c);
	free(d);
	if (bad)
		fprintf(stderr, "CHECK FAILED: the instrumented kernel computed wrong results\n");
	return bad;
}

static int run_count(struct app *app, const struct arrays *arr, bool check,
		     struct site_count *counts)
{
	float ms = launch(app, arr, N);

	read_counts(app, counts);
	print_counts(app, counts, ms);
	return check ? check_counts(app, counts) | check_results(arr) : 0;
}

/* Trace with the ring of the app's probe, described by @where. */
static int run_trace(struct app *app, const struct arrays *arr, bool check,
		     const struct site_count *counts, const char *where,
		     bool (*decode)(const void *, size_t, struct access *),
		     egpu_sample_fn fn)
{
	static struct trace t;
	struct ring_thread rt;
	uint64_t drops;
	int rc = 0;
	float ms;

	memset(&t, 0, sizeof(t));
	t.arr = arr;
	t.decode = decode;
	for (int k = 0; k < ARRAYS; k++)
		t.hits[k] = calloc(N, 1);
	for (int s = 0; s < MT_MAX_SITES; s++)
		t.site[s].array = -1;
	ring_thread_start(&rt, egpu_obj_map(app->obj, "events"), fn, &t);
	ms = launch(app, arr, N);
	CUDA_CHECK(cudaDeviceSynchronize());
	drops = ring_thread_stop(&rt);
	print_trace(app, &t, where, ms, drops);
	print_bandwidth(&t);
	if (check)
		rc = check_trace(app, &t, counts, drops) | check_results(arr);
	for (int k = 0; k < ARRAYS; k++)
		free(t.hits[k]);
	free(t.points);
	return rc;
}

/*
 * Values mode: add_and_gather over VALUES_N elements, every global access
 * with the value it moves (mem_trace_values.bpf.c), one record per thread
 * and access.
 */
#define VALUES_N 10 /* 33 % 10 = 3: the gather permutes src[0..9] */
#define VALUES_MAX (2 * ARRAYS * VALUES_N)

struct values {
	struct mt_value rec[VALUES_MAX];
	size_t cnt;
	uint64_t bad; /* records of the wrong size, or more than expected */
};

static int on_value(void *user, const void *data, size_t size)
{
	struct values *v = user;

	if (size != sizeof(struct mt_value) || v->cnt == VALUES_MAX)
		v->bad++;
	else
		memcpy(&v->rec[v->cnt++], data, size);
	return 0;
}

/* By thread, then site: each thread's accesses in program order. */
static int cmp_value(const void *a, const void *b)
{
	const struct mt_value *x = a, *y = b;

	if (x->thread != y->thread)
		return (x->thread > y->thread) - (x->thread < y->thread);
	return (x->site > y->site) - (x->site < y->site);
}

static float as_float(uint64_t bits)
{
	uint32_t w = (uint32_t)bits;
	float f;

	memcpy(&f, &w, sizeof(f));
	return f;
}

static uint64_t float_bits(float f)
{
	uint32_t w;

	memcpy(&w, &f, sizeof(w));
	return w;
}

static void print_values(const struct app *app, const struct arrays *arr,
			 const struct values *v)
{
	printf("\nadd_and_gather with n = %d: every global access and its value\n",
	       VALUES_N);
	printf("thread  site  kind   %-18s %-8s %10s  %s\n", "address", "element",
	       "value", "(overwritten)");
	for (size_t i = 0; i < v->cnt; i++) {
		const struct mt_value *r = &v->rec[i];
		bool store = r->kind == EGPU_MEM_STORE;
		char elem[32] = "?";
		size_t idx;
		int k = locate(arr, r->addr, &idx);

		if (k >= 0)
			snprintf(elem, sizeof(elem), "%s[%zu]", array_names[k], idx);
		printf("%6u  %4u  %-6s 0x%016llx %-8s %10g", r->thread,
		       r->site - app->report.site_base, kind_name(r->kind),
		       (unsigned long long)r->addr, elem,
		       as_float(store ? r->stored : r->before));
		if (store)
			printf("  (%g)", as_float(r->before));
		printf("\n");
	}
}

/* The index add_and_gather's thread @i accesses in array @k. */
static size_t index_of(int k, uint32_t i)
{
	return k == SRC ? (size_t)i * STRIDE % VALUES_N : i;
}

/* @r is what thread r->thread loads or stores: the right element, kind
 * and bytes; a store writes what the kernel left in the array (@out)
 * over the array's initial value. */
static int check_value(const struct arrays *arr, float *const out[ARRAYS],
		       const struct mt_value *r, uint8_t hits[ARRAYS][VALUES_N])
{
	size_t idx;
	int k = locate(arr, r->addr, &idx);

	if (k < 0 || r->size != sizeof(float) || r->thread >= VALUES_N ||
	    r->kind != array_kinds[k] || idx != index_of(k, r->thread))
		return fail("an access add_and_gather does not make", r->site);
	if (r->before != float_bits(arr->host[k][idx]))
		return fail("value at the address differs from the array's", r->site);
	if (r->kind == EGPU_MEM_STORE && r->stored != float_bits(out[k][idx]))
		return fail("stored value differs from what the kernel wrote", r->site);
	hits[k][r->thread]++;
	return 0;
}

/* Every element of a, b, c, src, dst below VALUES_N accessed once, with
 * its value; c and dst hold a + b and the gathered src. */
static int check_values(const struct arrays *arr, const struct values *v,
			uint64_t drops)
{
	static uint8_t hits[ARRAYS][VALUES_N];
	static float c[VALUES_N], dst[VALUES_N];
	float *const out[ARRAYS] = { [C] = c, [DST] = dst };
	int rc = 0;

	if (drops || v->bad || v->cnt != ARRAYS * VALUES_N)
		return fail("records dropped, malformed or missing", 0);
	CUDA_CHECK(cudaMemcpy(c, arr->dev[C], sizeof(c), cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(dst, arr->dev[DST], sizeof(dst), cudaMemcpyDeviceToHost));
	for (int i = 0; i < VALUES_N; i++)
		if (c[i] != arr->host[A][i] + arr->host[B][i] ||
		    dst[i] != arr->host[SRC][index_of(SRC, i)])
			rc = fail("the instrumented kernel computed wrong results", 0);
	memset(hits, 0, sizeof(hits));
	for (size_t i = 0; i < v->cnt && !rc; i++)
		rc = check_value(arr, out, &v->rec[i], hits);
	for (int k = 0; k < ARRAYS && !rc; k++)
		for (int i = 0; i < VALUES_N && !rc; i++)
			if (hits[k][i] != 1)
				rc = fail("a thread's access recorded other than once", 0);
	return rc;
}

static int run_values(struct app *app, const struct arrays *arr, bool check)
{
	static struct values v;
	struct ring_thread rt;
	uint64_t drops;

	memset(&v, 0, sizeof(v));
	ring_thread_start(&rt, egpu_obj_map(app->obj, "values"), on_value, &v);
	launch(app, arr, VALUES_N);
	CUDA_CHECK(cudaDeviceSynchronize());
	drops = ring_thread_stop(&rt);
	qsort(v.rec, v.cnt, sizeof(v.rec[0]), cmp_value);
	print_values(app, arr, &v);
	return check ? check_values(arr, &v, drops) : 0;
}

/* The sites' instructions as the counting pass numbered them. */
struct site_names {
	char text[MT_MAX_SITES][128];
	uint32_t cnt;
};

static void name_sites(const struct app *app, struct site_names *n)
{
	n->cnt = site_cnt(app);
	for (uint32_t s = 0; s < n->cnt; s++)
		snprintf(n->text[s], sizeof(n->text[s]), "%s", site_text(app, s));
}

/*
 * @counts (numbered as @n) by this pass's site numbers, into @out: the
 * splicer's trace mode numbers only the sites it traces (global), the
 * probes every site their sections select, so sites are matched by
 * their instruction.
 */
static void renumber_counts(const struct app *app, const struct site_names *n,
			    const struct site_count *counts,
			    struct site_count *out)
{
	for (uint32_t s = 0; s < site_cnt(app); s++) {
		const char *text = site_text(app, s);

		out[s] = (struct site_count){ 0 };
		for (uint32_t j = 0; j < n->cnt; j++)
			if (!strcmp(n->text[j], text))
				out[s] = counts[j];
	}
}

/* Counting, then tracing with each ring. */
static int run_modes(struct app *app, const struct arrays *arr, bool check)
{
	static struct site_count counts[MT_MAX_SITES], renumbered[MT_MAX_SITES];
	static struct site_names names;
	int rc;

	printf("add_and_gather<<<%u, %u>>>: c = a + b, dst[i] = src[i * %d %% %d]\n",
	       N / BLOCK, BLOCK, STRIDE, N);
	rc = run_count(app, arr, check, counts);
	name_sites(app, &names);
	app_stop(app);
	app_start(app, EXAMPLE_PROBE, EXAMPLE_PTX);
	rc |= run_trace(app, arr, check, counts, "host", decode_mt, on_record);
	app_stop(app);
	app_start(app, DEVICE_RING_PROBE, EXAMPLE_PTX);
	rc |= run_trace(app, arr, check, counts, "GPU", decode_mt, on_record);
	app_stop(app);
	app_start(app, WARP_PROBE, EXAMPLE_PTX);
	rc |= run_trace(app, arr, check, counts,
			"GPU (bpf_egpu_trace_warp, per-SM shards)", decode_warp,
			on_record);
	app_stop(app);
	app_start(app, SPAN_PROBE, EXAMPLE_PTX);
	rc |= run_trace(app, arr, check, counts,
			"GPU (bpf_egpu_trace_span, spans)", NULL, on_span);
	app_stop(app);
	app_start_mem_trace(app, SPAN_PROBE, "events", EXAMPLE_PTX);
	renumber_counts(app, &names, counts, renumbered);
	rc |= run_trace(app, arr, check, renumbered,
			"GPU (the splicer's trace mode, spans)", NULL, on_span);
	return rc;
}

/*
 * --read FILE: a record file of spans (`egpu attach --trace FILE` with
 * mem_trace_span_lossless.bpf.o) decoded, every lane's address, size and
 * kind; per site, the warp accesses, lane accesses and 32-byte sectors
 * against the fewest possible. Fails on a malformed span or file.
 */
static int read_file(const char *path)
{
	static struct trace t;
	uint64_t lanes = 0;
	long spans = egpu_record_file_read(path, on_span, &t);

	if (spans < 0) {
		fprintf(stderr, "mem_trace: %s\n", egpu_errmsg());
		return 1;
	}
	printf("%s: %ld spans, %llu warp accesses\n", path, spans,
	       (unsigned long long)t.records);
	printf("site  kind  warp accesses  lane accesses   sectors  ideal\n");
	for (uint32_t s = 0; s < MT_MAX_SITES; s++) {
		const struct site_trace *st = &t.site[s];

		if (!st->warp_accesses)
			continue;
		lanes += st->lanes;
		printf("%4u  %4u  %13llu  %13llu  %8llu  %5llu\n", s, st->kind,
		       (unsigned long long)st->warp_accesses,
		       (unsigned long long)st->lanes,
		       (unsigned long long)st->sectors,
		       (unsigned long long)st->ideal);
	}
	printf("%llu lane accesses decoded, %llu malformed\n",
	       (unsigned long long)lanes, (unsigned long long)t.bad);
	return t.bad != 0;
}

int main(int argc, char **argv)
{
	bool check = false, values = false;
	struct arrays arr;
	const char *why;
	struct app app;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check")) {
			check = true;
		} else if (!strcmp(argv[i], "--values")) {
			values = true;
		} else if (!strcmp(argv[i], "--read") && i + 1 < argc) {
			return read_file(argv[i + 1]);
		} else {
			fprintf(stderr, "usage: mem_trace [--values] [--check] | --read FILE\n");
			return 2;
		}
	}
	if (check && !app_gpu_present(&why)) {
		printf("no GPU here (%s): nothing to check\n", why);
		return APP_SKIP;
	}
	app_start(&app, values ? VALUES_PROBE : COUNT_PROBE, EXAMPLE_PTX);
	if (!app.gpu) {
		rc = app_no_gpu(&app, check);
		app_stop(&app);
		return rc;
	}
	fill_arrays(&arr);
	rc = values ? run_values(&app, &arr, check) : run_modes(&app, &arr, check);
	app_stop(&app);
	free_arrays(&arr);
	if (check && !rc)
		printf("check passed\n");
	return rc;
}
