// SPDX-License-Identifier: MIT
/*
 * egpu memcheck's allocation table without a GPU (sim_gpu.h plays it):
 * synchronous and stream-ordered allocations and frees, a pool reusing an
 * address whose free is still queued, graphs, VMM maps merged and cut,
 * a site's hint ending with its allocation, the hint's words and the
 * tag's wrap, growth to thousands of allocations against a brute-force
 * reference, slots reused after a quiesce, threads allocating while
 * others "launch", and the words a report uses.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/memcheck_layout.h"
#include "memcheck/memcheck_globals.h"
#include "memcheck/memcheck_table.h"
#include "trace/symbols.h"
#include "core/core.h"
#include "sim_gpu.h"
#include "test_util.h"

#define A 0x7f0000000000ull
#define MiB (1ull << 20)

static struct sim_gpu g;
static struct sim_stream streams[4];
static struct mc_table *t;

static void setup_slots(uint32_t max_slots)
{
	sim_init(&g, max_slots, streams, ARRAY_SIZE(streams));
	t = mc_table_new(&g.be);
	ck_assert_ptr_nonnull(t);
}

static void setup(void)
{
	setup_slots(1u << 16);
}

static void teardown(void)
{
	mc_table_free(t);
	sim_fini(&g);
}

static const char *describe(uint64_t addr, uint32_t size)
{
	static char buf[256];

	mc_table_describe(t, addr, size, buf, sizeof(buf));
	return buf;
}

START_TEST(sync_alloc_and_free)
{
	ck_assert_int_eq(mc_table_alloc(t, A, 4 * MiB, MC_KIND_ALLOC), 0);
	ck_assert(sim_check(&g, A, 4));
	ck_assert(sim_check(&g, A + 4 * MiB - 16, 16));
	ck_assert(!sim_check(&g, A + 4 * MiB - 2, 4)); /* straddles the end */
	ck_assert(!sim_check(&g, A + 4 * MiB, 4));
	ck_assert(!sim_check(&g, A - 4, 4));
	ck_assert_int_eq(mc_table_free_at(t, A, NULL, false), 0);
	ck_assert(!sim_check(&g, A, 4));
	ck_assert_uint_eq(mc_table_count(t), 0);
	ck_assert_int_eq(mc_table_free_at(t, A, NULL, false), EGPU_ENOENT);
}
END_TEST

START_TEST(bad_ranges)
{
	ck_assert_int_eq(mc_table_alloc(t, A, 0, MC_KIND_ALLOC), EGPU_EINVAL);
	ck_assert_int_eq(mc_table_alloc(t, UINT64_MAX - 8, 16, MC_KIND_ALLOC),
			 EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "bad range"));
	ck_assert_int_eq(mc_table_map(t, A, 0), EGPU_EINVAL);
	ck_assert_uint_eq(g.publishes, 0);
	/* an access wrapping the address space is never inside */
	ck_assert_int_eq(mc_table_alloc(t, UINT64_MAX - 63, 63, MC_KIND_ALLOC), 0);
	ck_assert(!sim_check(&g, UINT64_MAX - 8, 16));
	ck_assert(sim_check(&g, UINT64_MAX - 63, 63));
}
END_TEST

/* Adjacent allocations: an access one past the first lands in the second,
 * and an access spanning both is inside neither. */
START_TEST(adjacent)
{
	ck_assert_int_eq(mc_table_alloc(t, A, 256, MC_KIND_ALLOC), 0);
	ck_assert_int_eq(mc_table_alloc(t, A + 256, 256, MC_KIND_ALLOC), 0);
	ck_assert(sim_check(&g, A + 252, 4));
	ck_assert(sim_check(&g, A + 256, 4));
	ck_assert(!sim_check(&g, A + 252, 8));
	ck_assert(!sim_check(&g, A + 512, 1));
}
END_TEST

/* A pool allocation is live when its stream gets there; its free takes
 * effect in stream order and the record leaves when the stream has run
 * it. */
START_TEST(stream_ordered)
{
	struct sim_stream *s = &streams[0];

	ck_assert_int_eq(mc_table_alloc_async(t, A, 1024, MC_KIND_ASYNC, s, false), 0);
	ck_assert(!sim_check(&g, A, 4)); /* the stream is not there yet */
	sim_run(&g, s);
	ck_assert(sim_check(&g, A + 1020, 4));
	ck_assert_int_eq(mc_table_free_at(t, A, s, false), 0);
	ck_assert(sim_check(&g, A, 4)); /* kernels queued before the free */
	ck_assert_uint_eq(mc_table_count(t), 1);
	sim_run(&g, s);
	ck_assert(!sim_check(&g, A, 4));
	ck_assert_uint_eq(mc_table_count(t), 0);
	ck_assert_str_eq(describe(A + 8, 4),
			 "at offset 8 of a 1,024-byte cudaMallocAsync allocation that was freed (use after free)");
}
END_TEST

/* The pool hands the address out again before the stream reached the
 * free: both records are in the index, each live in its own stretch of
 * the stream. */
START_TEST(pool_reuse_before_free_runs)
{
	struct sim_stream *s = &streams[0];

	ck_assert_int_eq(mc_table_alloc_async(t, A, 1024, MC_KIND_POOL, s, false), 0);
	sim_run(&g, s);
	ck_assert_int_eq(mc_table_free_at(t, A, s, false), 0);
	ck_assert_int_eq(mc_table_alloc_async(t, A, 512, MC_KIND_POOL, s, false), 0);
	ck_assert(sim_check(&g, A + 768, 4)); /* the first still live */
	sim_run(&g, s);
	ck_assert(!sim_check(&g, A + 768, 4));
	ck_assert(sim_check(&g, A + 508, 4));
	ck_assert(!sim_check(&g, A + 512, 4));
	ck_assert_uint_eq(mc_table_count(t), 1);
	ck_assert_str_eq(describe(A + 512, 4),
			 "just past the end of a 512-byte cudaMallocFromPoolAsync allocation");
	/* the free goes to the second record, not the dead first */
	ck_assert_int_eq(mc_table_free_at(t, A, NULL, false), 0);
	ck_assert_uint_eq(mc_table_count(t), 0);
}
END_TEST

/* More overlapping records than a segment lists: not checked there (no
 * false report), checked everywhere else. */
START_TEST(cover_overflow_is_never_a_false_report)
{
	struct sim_stream *s = &streams[0];

	for (int i = 0; i < MC_COVER + 2; i++) {
		ck_assert_int_eq(mc_table_alloc_async(t, A, 4096, MC_KIND_POOL,
						      s, false), 0);
		ck_assert_int_eq(mc_table_free_at(t, A, s, false), 0);
	}
	ck_assert_int_eq(mc_table_alloc_async(t, A, 4096, MC_KIND_POOL, s, false), 0);
	ck_assert(sim_check(&g, A + 4, 4));
	ck_assert(!sim_check(&g, A + 4096, 4));
	sim_run(&g, s);
	ck_assert_uint_eq(mc_table_count(t), 1);
	ck_assert_int_eq(mc_table_alloc(t, A + 8192, 64, MC_KIND_ALLOC), 0);
	ck_assert(sim_check(&g, A + 4, 4)); /* republished: one record */
	ck_assert(!sim_check(&g, A + 4096, 4));
}
END_TEST

/* A site's hint (struct mc_hint) answers for its allocation only while
 * it is live: until a stream reaches its free, a synchronous free, a
 * free a graph captured (whose entry takes no hint after). */
START_TEST(hints_follow_frees)
{
	struct sim_stream *s = &streams[0];
	struct mc_hint h = { 0 };

	ck_assert(sim_site_check(&g, &h, A, 4)); /* no table: passes */
	ck_assert(!h.base && !h.end);
	ck_assert_int_eq(mc_table_alloc(t, A, 1024, MC_KIND_ALLOC), 0);
	ck_assert(sim_site_check(&g, &h, A + 1020, 4)); /* the search's hint */
	ck_assert(mc_hint_holds(&h, g.tag, A, 4));
	ck_assert(!mc_hint_holds(&h, g.tag, A + 1021, 4));
	ck_assert(!sim_site_check(&g, &h, A + 1024, 4));
	/* another allocation: a new index, the hint searched again */
	ck_assert_int_eq(mc_table_alloc(t, A + MiB, 64, MC_KIND_ALLOC), 0);
	ck_assert(!mc_hint_holds(&h, g.tag, A, 4));
	ck_assert(sim_site_check(&g, &h, A, 4));
	ck_assert_int_eq(mc_table_free_at(t, A, s, false), 0);
	ck_assert(mc_hint_holds(&h, g.tag, A, 4)); /* queued before it */
	sim_run(&g, s);
	ck_assert(!mc_hint_holds(&h, g.tag, A, 4));
	ck_assert(!sim_site_check(&g, &h, A, 4));
	/* synchronous */
	ck_assert(sim_site_check(&g, &h, A + MiB, 4));
	ck_assert_int_eq(mc_table_free_at(t, A + MiB, NULL, false), 0);
	ck_assert(!mc_hint_holds(&h, g.tag, A + MiB, 4));
	ck_assert(!sim_site_check(&g, &h, A + MiB, 4));
	/* captured: each replay frees it, with no new tag */
	ck_assert_int_eq(mc_table_alloc(t, A, 256, MC_KIND_ALLOC), 0);
	ck_assert(sim_site_check(&g, &h, A, 4));
	ck_assert_int_eq(mc_table_free_at(t, A, s, true), 0);
	ck_assert(!mc_hint_holds(&h, g.tag, A, 4));
	ck_assert(sim_site_check(&g, &h, A, 4)); /* no replay yet */
	ck_assert(!mc_hint_holds(&h, g.tag, A, 4));
	sim_run(&g, s);
	ck_assert(!sim_site_check(&g, &h, A, 4));
}
END_TEST

/* The hint's words: a stale or zeroed hint holds nothing, nor does any
 * hint an address past 2^48; an end past it, or a graph's entry, takes
 * no hint; the tag wraps
 * after 65,536 changes, where the backend zeroes the hints. */
START_TEST(hint_words)
{
	struct mc_hint h = { 0 }, z = { 0 };
	uint64_t top = 1ull << MC_HINT_ADDR_BITS;
	struct mc_entry e = { .base = A, .end = A + 64 };

	ck_assert(mc_hint_of(&e, mc_tag_word(7), &h));
	ck_assert(mc_hint_holds(&h, mc_tag_word(7), A + 60, 4));
	for (uint64_t n = 0; n < 70000; n += 997) {
		ck_assert(!mc_hint_holds(&z, mc_tag_word(n), 0, 1));
		ck_assert(n == 7 || !mc_hint_holds(&h, mc_tag_word(n), A, 4));
	}
	ck_assert(!mc_hint_holds(&h, mc_tag_word(7), A + top, 4));
	e = (struct mc_entry){ .base = top - 64, .end = top - 1 };
	ck_assert(mc_hint_of(&e, mc_tag_word(7), &h));
	ck_assert(!mc_hint_holds(&h, mc_tag_word(7), top - 4, 4));
	e.end = top;
	ck_assert(!mc_hint_of(&e, mc_tag_word(7), &h));
	e = (struct mc_entry){ .base = ~0ull - 64, .end = ~0ull };
	ck_assert(!mc_hint_of(&e, mc_tag_word(7), &h));
	e = (struct mc_entry){ .base = A, .end = A + 64,
			       .flags = MC_ENTRY_NO_HINT };
	ck_assert(!mc_hint_of(&e, mc_tag_word(7), &h));
	ck_assert_uint_eq(mc_tag_word(65536), 0);
	for (int i = 0; i < 32768; i++) { /* two changes each */
		ck_assert_int_eq(mc_table_alloc(t, A, 64, MC_KIND_ALLOC), 0);
		ck_assert_int_eq(mc_table_free_at(t, A, NULL, false), 0);
	}
	ck_assert_uint_eq(g.tags, 65536);
	ck_assert_uint_eq(g.wraps, 1);
	ck_assert_uint_eq(g.tag, 0);
}
END_TEST

/* Allocation stacks: kept once per place, named for the words with
 * libegpu's and the CUDA runtime's frames left out. Here libegpu is in
 * the test program itself, so every frame is libegpu's and none is
 * named; egpu memcheck's suite (memcheck_suite_gpu) names the
 * application's frames. */
START_TEST(origins)
{
	ck_assert_int_eq(mc_table_keep_origins(t), 0);
	ck_assert_int_eq(mc_table_alloc(t, A, 4096, MC_KIND_ALLOC), 0);
	ck_assert_str_eq(describe(A + 4096, 4),
			 "just past the end of a 4,096-byte cudaMalloc allocation");
	ck_assert(sym_cuda_runtime("cudart::cudaApiMalloc(void**, unsigned long)", NULL));
	ck_assert(sym_cuda_runtime("__cudart1234", NULL));
	ck_assert(sym_cuda_runtime("libcudart_static_5382377d5c772c9d", NULL));
	ck_assert(sym_cuda_runtime("cudaMalloc", NULL));
	ck_assert(sym_cuda_runtime("cuMemAlloc_v2", NULL));
	ck_assert(sym_cuda_runtime("cudaError cudaMalloc<float>(float**, unsigned long)", NULL));
	ck_assert(!sym_cuda_runtime("global_after()", NULL));
	ck_assert(!sym_cuda_runtime("cube(int)", NULL));
	ck_assert(!sym_cuda_runtime("main", NULL));
	ck_assert(!sym_cuda_runtime("cudaMalloc", "cudaLaunchKernel"));
}
END_TEST

/* A graph's allocation lives as long as the table; its state follows each
 * replay. */
START_TEST(graph_allocations_stay)
{
	struct sim_stream *s = &streams[1];

	ck_assert_int_eq(mc_table_alloc_async(t, A, 256, MC_KIND_ASYNC, s, true), 0);
	ck_assert_int_eq(mc_table_free_at(t, A, s, true), 0);
	sim_run(&g, s);
	ck_assert_uint_eq(mc_table_count(t), 1);
	ck_assert(!sim_check(&g, A, 4));
}
END_TEST

START_TEST(vmm_merge_and_cut)
{
	ck_assert_int_eq(mc_table_map(t, A, 2 * MiB), 0);
	ck_assert_int_eq(mc_table_map(t, A + 2 * MiB, 2 * MiB), 0);
	ck_assert_uint_eq(mc_table_count(t), 1); /* one run */
	ck_assert(sim_check(&g, A + 2 * MiB - 8, 16)); /* across the maps */
	ck_assert_int_eq(mc_table_unmap(t, A, 2 * MiB), 0);
	ck_assert(!sim_check(&g, A, 4));
	ck_assert(sim_check(&g, A + 2 * MiB, 4));
	ck_assert_int_eq(mc_table_map(t, A, 2 * MiB), 0);
	ck_assert_uint_eq(mc_table_count(t), 1);
	ck_assert(sim_check(&g, A + MiB, (uint32_t)(3 * MiB - 1)));
	/* a cut in the middle leaves both sides */
	ck_assert_int_eq(mc_table_unmap(t, A + MiB, 2 * MiB), 0);
	ck_assert_uint_eq(mc_table_count(t), 2);
	ck_assert(sim_check(&g, A + MiB - 4, 4));
	ck_assert(!sim_check(&g, A + MiB - 4, 8));
	ck_assert(!sim_check(&g, A + 2 * MiB, 4));
	ck_assert(sim_check(&g, A + 3 * MiB, 4));
	ck_assert_str_eq(describe(A + 2 * MiB, 4),
			 "1,048,576 bytes past the end of a 1,048,576-byte cuMemMap allocation");
	/* a VMM run does not merge with an ordinary allocation beside it */
	ck_assert_int_eq(mc_table_alloc(t, A + 4 * MiB, 4096, MC_KIND_ALLOC), 0);
	ck_assert(!sim_check(&g, A + 4 * MiB - 4, 8));
	ck_assert_int_eq(mc_table_unmap(t, A, 4 * MiB), 0);
	ck_assert_uint_eq(mc_table_count(t), 1);
	ck_assert(sim_check(&g, A + 4 * MiB, 4));
}
END_TEST

/* Brute force: inside one live record? */
struct ref {
	uint64_t base, end;
	bool live;
};

static bool ref_check(const struct ref *r, size_t n, uint64_t addr,
		      uint32_t size)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].live && addr >= r[i].base && addr + size <= r[i].end)
			return true;
	return false;
}

START_TEST(growth_matches_reference)
{
	enum { N = 3000 };
	struct ref *r = calloc(N, sizeof(*r));
	unsigned seed = 25;

	for (size_t i = 0; i < N; i++) {
		r[i].base = A + i * 8192 + (rand_r(&seed) % 16) * 16;
		r[i].end = r[i].base + 1 + rand_r(&seed) % 4096;
		r[i].live = true;
		ck_assert_int_eq(mc_table_alloc(t, r[i].base, r[i].end - r[i].base,
						MC_KIND_ALLOC), 0);
	}
	for (size_t i = 0; i < N; i += 3) {
		ck_assert_int_eq(mc_table_free_at(t, r[i].base, NULL, false), 0);
		r[i].live = false;
	}
	ck_assert_uint_eq(mc_table_count(t), N - (N + 2) / 3);
	ck_assert_uint_eq(g.index_bytes,
			  mc_index_bytes(((struct mc_index_hdr *)g.index)->nseg,
					 ((struct mc_index_hdr *)g.index)->nent));
	for (int k = 0; k < 200000; k++) {
		uint64_t addr = A - 64 + rand_r(&seed) % (N * 8192ull + 128);
		uint32_t size = 1u << (rand_r(&seed) % 5);

		const struct mc_entry *e = NULL;

		ck_assert_int_eq(sim_check(&g, addr, size),
				 ref_check(r, N, addr, size));
		/* the entry a check may remember holds the access */
		if (mc_find(g.index, g.states, addr, size, &e))
			ck_assert(e && e->base <= addr && addr + size <= e->end &&
				  g.states[e->slot]);
	}
	free(r);
}
END_TEST

/* Freed slots are reused only after a quiesce; when all are taken the
 * table asks for one. */
START_TEST(slots_reused_after_quiesce)
{
	teardown();
	setup_slots(4);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(mc_table_alloc(t, A + i * 4096, 64, MC_KIND_ALLOC), 0);
	ck_assert_int_eq(mc_table_alloc(t, A + 5 * 4096, 64, MC_KIND_ALLOC),
			 EGPU_ENOMEM);
	ck_assert_uint_eq(g.quiesces, 1);
	ck_assert_int_eq(mc_table_free_at(t, A, NULL, false), 0);
	ck_assert_int_eq(mc_table_alloc(t, A + 5 * 4096, 64, MC_KIND_ALLOC), 0);
	ck_assert_uint_eq(g.quiesces, 2);
	ck_assert(!sim_check(&g, A, 4));
	ck_assert(sim_check(&g, A + 5 * 4096, 4));
	/* a stream-ordered allocation in a reused slot starts dead */
	ck_assert_int_eq(mc_table_free_at(t, A + 4096, NULL, false), 0);
	mc_table_quiesced(t);
	ck_assert_int_eq(mc_table_alloc_async(t, A + 9 * 4096, 64, MC_KIND_ASYNC,
					      &streams[0], false), 0);
	ck_assert(!sim_check(&g, A + 9 * 4096, 4));
	sim_run(&g, &streams[0]);
	ck_assert(sim_check(&g, A + 9 * 4096, 4));
}
END_TEST

START_TEST(words)
{
	ck_assert_str_eq(describe(A, 4), "not near any allocation (none is live)");
	ck_assert_int_eq(mc_table_alloc(t, A, 4194304, MC_KIND_ALLOC), 0);
	ck_assert_str_eq(describe(A + 4194304, 4),
			 "just past the end of a 4,194,304-byte cudaMalloc allocation");
	ck_assert_str_eq(describe(A + 4194308, 4),
			 "4 bytes past the end of a 4,194,304-byte cudaMalloc allocation");
	ck_assert_str_eq(describe(A - 4, 4),
			 "4 bytes before the start of a 4,194,304-byte cudaMalloc allocation");
	ck_assert_str_eq(describe(A + 4194302, 4),
			 "at offset 4,194,302 of a 4,194,304-byte cudaMalloc allocation, running 2 bytes past its end");
	ck_assert_int_eq(mc_table_alloc(t, A + 8 * MiB, 1, MC_KIND_GLOBAL), 0);
	ck_assert_int_eq(mc_table_alloc(t, A + 8 * MiB, 1, MC_KIND_GLOBAL), 0);
	ck_assert_uint_eq(mc_table_count(t), 2); /* a variable asked for twice */
	ck_assert_str_eq(describe(A + 8 * MiB - 1, 1),
			 "1 byte before the start of a 1-byte __device__ variable allocation");
	ck_assert_int_eq(mc_table_free_at(t, A, NULL, false), 0);
	ck_assert_str_eq(describe(A + 16, 4),
			 "at offset 16 of a 4,194,304-byte cudaMalloc allocation that was freed (use after free)");
	ck_assert_str_eq(mc_kind_name(MC_KIND_COUNT), "unknown");
	/* a short buffer is cut, never overrun */
	{
		char small[8];

		mc_table_describe(t, A + 16, 4, small, sizeof(small));
		ck_assert_uint_eq(strlen(small), 7);
	}
}
END_TEST

/* Threads allocating and freeing (synchronously and in stream order)
 * while others check the published index, and a "driver" thread runs the
 * streams: an allocation is always inside from the moment its call
 * returns to its free, and the index is never torn. */
enum { WORKERS = 3, ROUNDS = 400 };
static volatile int stop;
static int failures;

static void *worker(void *arg)
{
	long id = (long)arg;
	struct sim_stream *s = &streams[id];

	struct mc_hint h = { 0 }; /* a site's, as a kernel would keep it */

	for (int i = 0; i < ROUNDS; i++) {
		uint64_t base = A + (uint64_t)id * 64 * MiB + (i % 64) * MiB;
		bool async = i & 1;

		if (mc_table_alloc(t, base, 4096, MC_KIND_ALLOC) ||
		    !sim_site_check(&g, &h, base + 4092, 4) ||
		    sim_site_check(&g, &h, base + 4096, 4) ||
		    mc_table_free_at(t, base, async ? s : NULL, false))
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
		if (!async && sim_site_check(&g, &h, base, 4))
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *driver(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		for (int i = 0; i < WORKERS; i++)
			sim_run(&g, &streams[i]);
	return NULL;
}

static void *launcher(void *arg)
{
	unsigned seed = (unsigned)(long)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		const struct mc_index_hdr *h;
		bool sorted = true;

		pthread_mutex_lock(&g.lock);
		h = g.index;
		for (uint32_t i = 0; h && i < h->nseg; i++)
			sorted &= mc_bounds(h)[i] < mc_bounds(h)[i + 1];
		if (h)
			(void)mc_check(h, g.states, A + rand_r(&seed) % (WORKERS * 64 * MiB), 4);
		pthread_mutex_unlock(&g.lock);
		if (!sorted)
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

START_TEST(threads)
{
	pthread_t w[WORKERS], d, l[2];

	stop = 0;
	failures = 0;
	ck_assert_int_eq(pthread_create(&d, NULL, driver, NULL), 0);
	for (long i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&l[i], NULL, launcher, (void *)(i + 1)), 0);
	for (long i = 0; i < WORKERS; i++)
		ck_assert_int_eq(pthread_create(&w[i], NULL, worker, (void *)i), 0);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(w[i], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(d, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(l[i], NULL);
	for (int i = 0; i < WORKERS; i++)
		sim_run(&g, &streams[i]);
	ck_assert_int_eq(failures, 0);
	ck_assert_uint_eq(mc_table_count(t), 0);
}
END_TEST

/* The same lookup as device code: nvcc built it for sm_90 (the build);
 * ptxas takes it. */
START_TEST(lookup_assembles_for_sm_90)
{
	char log[4096] = "";
	size_t len = 0;
	char *ptx = tu_read_file(EGPU_TEST_BUILD "/lookup_kernel.ptx", &len);

	if (!tu_have_ptxas()) {
		free(ptx);
		return;
	}
	ck_assert_msg(tu_ptxas(ptx, len, "sm_90", false, log, sizeof(log)),
		      "%s", log);
	ck_assert_ptr_nonnull(strstr(ptx, ".entry mc_lookup"));
	free(ptx);
}
END_TEST

/* A module's variables (mc_table_globals): where the "driver" says they
 * are; one it cannot find is left out; asked again, nothing changes. */
static int where_global(void *user, const char *name, uint64_t *addr,
			size_t *size)
{
	unsigned *asked = user;

	(*asked)++;
	if (!strcmp(name, "tab"))
		*addr = A, *size = 24;
	else if (!strcmp(name, "k"))
		*addr = A + 256, *size = 4;
	else
		return 1; /* CUDA_ERROR_INVALID_VALUE */
	return 0;
}

START_TEST(module_globals)
{
	static const char ptx[] =
		".version 8.0\n.target sm_90\n.address_size 64\n\n"
		".global .align 4 .b8 tab[24];\n"
		".const .align 4 .u32 k = 3;\n"
		".global .align 4 .u32 gone;\n"
		".extern .global .align 4 .b8 elsewhere[];\n"
		".global .align 8 .u64 egpu_dev_mc_cell;\n"
		".shared .align 4 .b8 sh[16];\n";
	unsigned asked = 0;

	ck_assert_int_eq(mc_table_globals(t, ptx, strlen(ptx), where_global,
					  &asked), 0);
	ck_assert_uint_eq(asked, 3); /* tab, k, gone: not extern, ours, shared */
	ck_assert_uint_eq(mc_table_count(t), 2);
	ck_assert(sim_check(&g, A + 20, 4));
	ck_assert(!sim_check(&g, A + 24, 4));
	ck_assert(sim_check(&g, A + 256, 4));
	ck_assert_str_eq(describe(A + 24, 4),
			 "just past the end of a 24-byte __device__ variable allocation");
	ck_assert_int_eq(mc_table_globals(t, ptx, strlen(ptx), where_global,
					  &asked), 0);
	ck_assert_uint_eq(mc_table_count(t), 2);
	ck_assert_int_eq(mc_table_globals(t, "not ptx {", 9, where_global,
					  &asked), EGPU_EFORMAT);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("memcheck_table");
	TCase *tc = tcase_create("table");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, sync_alloc_and_free);
	tcase_add_test(tc, bad_ranges);
	tcase_add_test(tc, adjacent);
	tcase_add_test(tc, stream_ordered);
	tcase_add_test(tc, pool_reuse_before_free_runs);
	tcase_add_test(tc, cover_overflow_is_never_a_false_report);
	tcase_add_test(tc, hints_follow_frees);
	tcase_add_test(tc, hint_words);
	tcase_add_test(tc, origins);
	tcase_add_test(tc, graph_allocations_stay);
	tcase_add_test(tc, vmm_merge_and_cut);
	tcase_add_test(tc, growth_matches_reference);
	tcase_add_test(tc, slots_reused_after_quiesce);
	tcase_add_test(tc, words);
	tcase_add_test(tc, threads);
	tcase_add_test(tc, lookup_assembles_for_sm_90);
	tcase_add_test(tc, module_globals);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite(), true) ? 1 : 0;
}
