// SPDX-License-Identifier: MIT
/*
 * Event rings and printing on a GPU (ctest label gpu; skipped without one):
 * one record per thread from an exit probe, record sizes differing within a
 * warp, exact drop counts with a tiny ring, exact delivery to a consumer
 * thread, consumption while the kernel that writes the records provably
 * still runs (for rings in host memory and in GPU memory alike), each
 * thread's records in order through a ring in GPU memory's shards, every
 * ring helper in direct GPU runs, print lines from probes and direct runs,
 * warp records (one reservation each, or batched in spans) exact.
 */
#include <check.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/internal.h"
#include "cuda/cu.h"
#include "maps/ring.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "test_util.h"

#define EVENTS_OBJ EGPU_TEST_BUILD "/events.bpf.o"
#define EVENTS_PTX EGPU_TEST_BUILD "/kernels.ptx"
#define BLOCK 256

static egpu_ctx *ctx;
static egpu_obj *obj;

static void setup(void)
{
	ctx = egpu_ctx_new(NULL);
	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, EVENTS_OBJ, NULL);
	ck_assert_msg(obj, "load: %s", egpu_errmsg());
}

static void teardown(void)
{
	egpu_ctx_free(ctx);
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	buf = calloc(1, *len + 1);
	ck_assert_uint_eq(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

/* Attach @prog to `work`, load the module, run @threads threads. */
static void run_work(const char *prog, enum egpu_attach_point at,
		     uint32_t threads, int rounds)
{
	const struct cu_driver *d = cu();
	uint32_t grid = (threads + BLOCK - 1) / BLOCK;
	int n = (int)threads - 7; /* a few threads return early */
	egpu_link *link;
	CUdeviceptr x;
	CUfunction f;
	CUmodule mod;
	size_t len;
	char *ptx = read_all(EVENTS_PTX, &len);
	void *args[] = { &x, &n, &rounds };

	link = egpu_attach_kernel(egpu_obj_prog(obj, prog), "work", at, NULL);
	ck_assert_msg(link, "%s", egpu_errmsg());
	ck_assert_msg(!egpu_module_load(ctx, &mod, ptx, len), "%s", egpu_errmsg());
	CK_CU(d->cuModuleGetFunction(&f, mod, "work"));
	CK_CU(d->cuMemAlloc(&x, (size_t)threads * sizeof(float)));
	CK_CU(d->cuMemsetD8(x, 0, (size_t)threads * sizeof(float)));
	CK_CU(d->cuLaunchKernel(f, grid, 1, 1, BLOCK, 1, 1, 0, NULL, args, NULL));
	CK_CU(d->cuCtxSynchronize());
	d->cuMemFree(x);
	d->cuModuleUnload(mod);
	egpu_link_destroy(link);
	free(ptx);
}

struct event {
	uint64_t tid, bid, a, b, c, d, e;
};

/* Which threads were seen, and anything wrong with their records. */
struct seen {
	uint8_t *hit;
	uint32_t threads;
	size_t (*size_of)(uint64_t tid); /* NULL: every record is an event */
	uint64_t records;
	uint64_t dup, bad;
};

static int on_event(void *user, const void *data, size_t size)
{
	struct seen *s = user;
	struct event ev = { 0 };
	size_t want;

	memcpy(&ev, data, size < sizeof(ev) ? size : sizeof(ev));
	want = s->size_of ? s->size_of(ev.tid) : sizeof(ev);
	/* Atomics: with consumer threads, calls come from several at once. */
	__atomic_fetch_add(&s->records, 1, __ATOMIC_RELAXED);
	if (ev.tid >= s->threads || size != want || ev.bid != ev.tid / BLOCK ||
	    (size > offsetof(struct event, b) && ev.b != ev.tid * 3 + 1))
		__atomic_fetch_add(&s->bad, 1, __ATOMIC_RELAXED);
	else if (__atomic_fetch_add(&s->hit[ev.tid], 1, __ATOMIC_RELAXED))
		__atomic_fetch_add(&s->dup, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * Everything @rb holds, polled (@timeout_ms) or consumed (0) until a pass
 * finds nothing; a pass that fails fails the test with its message.
 */
static void drain(egpu_ringbuf *rb, int timeout_ms)
{
	int n;

	do
		n = timeout_ms ? egpu_ringbuf_poll(rb, timeout_ms) :
				 egpu_ringbuf_consume(rb);
	while (n > 0);
	ck_assert_msg(n == 0, "draining the ring: %d: %s", n, egpu_errmsg());
}

static void seen_init(struct seen *s, uint32_t threads)
{
	*s = (struct seen){ .hit = calloc(threads, 1), .threads = threads };
	ck_assert_ptr_nonnull(s->hit);
}

/*
 * @prog at work's exit in @threads threads, its records consumed from
 * @ring after the kernel: every thread's arrives once, whole, of its size
 * (@size_of), none dropped.
 */
static void every_thread_once(const char *prog, const char *ring,
			      uint32_t threads, size_t (*size_of)(uint64_t))
{
	struct seen s;
	egpu_ringbuf *rb;

	seen_init(&s, threads);
	s.size_of = size_of;
	rb = egpu_ringbuf_new(egpu_obj_map(obj, ring), on_event, &s);
	ck_assert_ptr_nonnull(rb);
	run_work(prog, EGPU_ATTACH_EXIT, threads, 10);
	drain(rb, 100);
	printf("%s, %u threads: %llu received, %llu dropped\n", ring, threads,
	       (unsigned long long)s.records,
	       (unsigned long long)egpu_ringbuf_drops(rb));
	ck_assert_uint_eq(s.bad, 0);
	ck_assert_uint_eq(s.dup, 0);
	ck_assert_uint_eq(s.records, threads);
	ck_assert_uint_eq(egpu_ringbuf_drops(rb), 0);
	egpu_ringbuf_free(rb);
	free(s.hit);
}

/* The consumer exists before the object first uses the GPU. */
START_TEST(one_record_per_thread)
{
	every_thread_once("on_exit", "rb", 64 * BLOCK, NULL);
}
END_TEST

/*
 * A ring in GPU memory (EGPU_F_RING_DEVICE), 2^19 threads' records in
 * 128 MiB, drained after the kernel shard by shard. (A shard holds 1/128
 * of the ring, for one SM: 2^20 threads, as before shards, would fill a
 * shard to 43%, or 86% if %smid left gaps and two SMs shared one.)
 */
START_TEST(device_ring_every_thread_of_a_large_grid)
{
	every_thread_once("on_exit_dev", "drb", 1u << 19, NULL);
}
END_TEST

/* Which record of each thread comes next (on_exit_seq_dev numbers them). */
struct in_order {
	uint8_t *next;
	uint32_t threads;
	uint64_t records, bad;
};

static int on_numbered_event(void *user, const void *data, size_t size)
{
	struct in_order *o = user;
	struct event ev = { 0 };

	memcpy(&ev, data, size < sizeof(ev) ? size : sizeof(ev));
	o->records++;
	if (size != sizeof(ev) || ev.tid >= o->threads ||
	    ev.b != ev.tid * 3 + 1 || ev.c != o->next[ev.tid]++)
		o->bad++;
	return 0;
}

/*
 * Four records from every thread into a ring in GPU memory: each thread's
 * arrive in the order it made them (a thread stays on its SM, so in one
 * shard), though the threads of different shards interleave.
 */
START_TEST(device_ring_keeps_each_threads_order)
{
	const uint32_t threads = 64 * BLOCK;
	struct in_order o = { .next = calloc(threads, 1), .threads = threads };
	egpu_ringbuf *rb;

	ck_assert_ptr_nonnull(o.next);
	rb = egpu_ringbuf_new(egpu_obj_map(obj, "drb"), on_numbered_event, &o);
	ck_assert_ptr_nonnull(rb);
	run_work("on_exit_seq_dev", EGPU_ATTACH_EXIT, threads, 10);
	drain(rb, 100);
	ck_assert_uint_eq(o.bad, 0);
	ck_assert_uint_eq(o.records, 4ull * threads);
	for (uint32_t i = 0; i < threads; i++)
		ck_assert_uint_eq(o.next[i], 4);
	ck_assert_uint_eq(egpu_ringbuf_drops(rb), 0);
	egpu_ringbuf_free(rb);
	free(o.next);
}
END_TEST

/* Records reserved, filled in GPU memory and submitted. */
START_TEST(device_ring_reserve_and_submit)
{
	every_thread_once("on_exit_resv_dev", "drb", 64 * BLOCK, NULL);
}
END_TEST

/* on_exit_mixed's record size for thread @tid. */
static size_t mixed_size(uint64_t tid)
{
	return (tid & 31) == 5 ? 40 : tid & 1 ? 24 : 56;
}

/*
 * Lanes of one warp outputting three sizes from one call: each size makes
 * its own batch (the lone lane its own record); every record arrives whole.
 */
START_TEST(sizes_differing_within_a_warp)
{
	every_thread_once("on_exit_mixed", "rb", 64 * BLOCK, mixed_size);
}
END_TEST

/*
 * 4 KiB hold at most 4096 / 56 records of 56 bytes (64 alone, a few more
 * packed in warps' batches): all other threads' are counted as dropped.
 */
static void tiny_ring_counts_every_drop(const char *prog, const char *ring)
{
	const uint32_t threads = 64 * BLOCK;
	struct seen s;
	egpu_ringbuf *rb;

	seen_init(&s, threads);
	rb = egpu_ringbuf_new(egpu_obj_map(obj, ring), on_event, &s);
	run_work(prog, EGPU_ATTACH_EXIT, threads, 10);
	drain(rb, 100);
	ck_assert_uint_eq(s.bad, 0);
	ck_assert_uint_eq(s.dup, 0);
	ck_assert_uint_ge(s.records, 1);
	ck_assert_uint_le(s.records, 4096 / sizeof(struct event));
	ck_assert_uint_eq(s.records + egpu_ringbuf_drops(rb), threads);
	egpu_ringbuf_free(rb);
	free(s.hit);
}

START_TEST(tiny_ring_counts_every_drop_host)
{
	tiny_ring_counts_every_drop("on_exit_tiny", "tiny");
}
END_TEST

START_TEST(tiny_ring_counts_every_drop_device)
{
	tiny_ring_counts_every_drop("on_exit_tiny_dev", "dtiny");
}
END_TEST

struct consumer {
	egpu_ringbuf *rb;
	bool stop;
};

static void *consume(void *arg)
{
	struct consumer *c = arg;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE))
		ck_assert_int_ge(egpu_ringbuf_poll(c->rb, 1), 0);
	return NULL;
}

/*
 * 4M threads, 256 MiB of records through @ring (1 MiB for rb, 128 MiB for
 * drb) with a consumer thread polling meanwhile: every thread is received
 * exactly once or counted as dropped, and at least a ring's worth arrives
 * (drb: every SM emits more than its shard holds, so each shard takes at
 * least its share).
 * (Whether the consumer frees space before this kernel ends depends on
 * timing: on an H100 the kernel finished first with rb, 16384 records, so
 * that is not asserted; consumed_while_the_kernel_runs proves the overlap.)
 */
static void exact_with_a_consumer_thread(const char *prog, const char *ring)
{
	const uint32_t threads = 1u << 22;
	egpu_map *m = egpu_obj_map(obj, ring);
	struct consumer c = { 0 };
	struct seen s;
	pthread_t t;

	seen_init(&s, threads);
	c.rb = egpu_ringbuf_new(m, on_event, &s);
	ck_assert_int_eq(pthread_create(&t, NULL, consume, &c), 0);
	run_work(prog, EGPU_ATTACH_EXIT, threads, 200);
	__atomic_store_n(&c.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	drain(c.rb, 0);
	printf("%s: consumed while running: %llu of %u records, %llu dropped\n",
	       ring, (unsigned long long)s.records, threads,
	       (unsigned long long)egpu_ringbuf_drops(c.rb));
	ck_assert_uint_eq(s.bad, 0);
	ck_assert_uint_eq(s.dup, 0);
	ck_assert_uint_eq(s.records + egpu_ringbuf_drops(c.rb), threads);
	/* a full ring at least */
	ck_assert_uint_ge(s.records, egpu_map_max_entries(m) / 64);
	egpu_ringbuf_free(c.rb);
	free(s.hit);
}

/* Records received from dmid, by the SM each record names. */
struct per_shard {
	struct seen seen;
	uint64_t got[1024];
};

static int on_sm_event(void *user, const void *data, size_t size)
{
	struct per_shard *p = user;
	struct event ev;

	memcpy(&ev, data, sizeof(ev));
	if (ev.e < 1024)
		__atomic_fetch_add(&p->got[ev.e], 1, __ATOMIC_RELAXED);
	return on_event(&p->seen, data, size);
}

/*
 * 4M threads into the 8 MiB dmid (64 KiB per shard) with a consumer
 * thread draining meanwhile: for every shard, the records received plus
 * the drops its producers counted equal the records its SMs emitted
 * (smcount), and every thread's record arrives at most once, whole.
 */
static void exact_per_shard(uint32_t consumer_threads)
{
	const uint32_t threads = 1u << 22;
	egpu_map *m = egpu_obj_map(obj, "dmid");
	static struct per_shard p;
	struct consumer c = { 0 };
	uint64_t emitted[1024] = { 0 }, received[1024] = { 0 }, got = 0, drops = 0;
	struct dev_ring shape = { 0 }; /* shards, for ring_shard_index() */
	EGPU_OPTS(egpu_ringbuf_opts, o, .threads = consumer_threads);
	pthread_t t;

	memset(&p, 0, sizeof(p));
	seen_init(&p.seen, threads);
	c.rb = egpu_ringbuf_new_opts(m, on_sm_event, &p, &o);
	ck_assert_ptr_nonnull(c.rb);
	ck_assert_int_eq(pthread_create(&t, NULL, consume, &c), 0);
	run_work("on_exit_sm_dev", EGPU_ATTACH_EXIT, threads, 200);
	__atomic_store_n(&c.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	drain(c.rb, 0);
	shape.shards = ring_dev_shards(m->ring);
	ck_assert_uint_gt(shape.shards, 1);
	for (uint32_t sm = 0; sm < 1024; sm++) {
		uint64_t v = 0;

		ck_assert_int_eq(egpu_map_lookup(egpu_obj_map(obj, "smcount"), &sm, &v), 0);
		emitted[ring_shard_index(&shape, sm)] += v;
		received[ring_shard_index(&shape, sm)] += p.got[sm];
	}
	for (uint32_t i = 0; i < shape.shards; i++) {
		uint64_t d = ring_dev_shard_drops(m->ring, i);

		ck_assert_msg(received[i] + d == emitted[i],
			      "shard %u: %llu received + %llu dropped != %llu emitted",
			      i, (unsigned long long)received[i],
			      (unsigned long long)d, (unsigned long long)emitted[i]);
		got += received[i];
		drops += d;
	}
	printf("dmid, %u consumer threads: %u shards, %llu received, %llu dropped of %u\n",
	       consumer_threads, shape.shards, (unsigned long long)got,
	       (unsigned long long)drops, threads);
	ck_assert_uint_eq(p.seen.bad, 0);
	ck_assert_uint_eq(p.seen.dup, 0);
	ck_assert_uint_eq(got, p.seen.records);
	ck_assert_uint_eq(got + drops, threads);
	ck_assert_uint_eq(drops, egpu_ringbuf_drops(c.rb));
	egpu_ringbuf_free(c.rb);
	free(p.seen.hit);
}

START_TEST(device_ring_exact_per_shard)
{
	exact_per_shard(1);
}
END_TEST

/* The same drained by 4 threads at once (egpu_ringbuf_opts.threads). */
START_TEST(device_ring_exact_per_shard_consumer_threads)
{
	exact_per_shard(4);
}
END_TEST

struct batch_seen {
	struct seen seen;
	uint64_t calls;
};

static int on_gpu_batch(void *user, const struct egpu_record *recs, size_t n)
{
	struct batch_seen *b = user;

	__atomic_fetch_add(&b->calls, 1, __ATOMIC_RELAXED);
	for (size_t i = 0; i < n; i++)
		on_event(&b->seen, recs[i].data, recs[i].size);
	return 0;
}

/*
 * Batch and file delivery from a ring in GPU memory: every thread's record
 * arrives once through the batch callback, in fewer calls than records,
 * and the file holds as many records of the event's size.
 */
static void batches_and_file(uint32_t consumer_threads)
{
	const uint32_t threads = 1u << 19;
	char path[] = "/tmp/egpu_gpu_rb_XXXXXX";
	int fd = mkstemp(path);
	struct batch_seen b = { 0 };
	EGPU_OPTS(egpu_ringbuf_opts, o, .batch_fn = on_gpu_batch, .path = path,
		  .threads = consumer_threads);
	egpu_ringbuf *rb = egpu_ringbuf_new(egpu_obj_map(obj, "tiny"), on_event,
					    &b.seen);
	uint64_t in_file = 0, hdr;
	struct egpu_record_file_header fh;
	FILE *f;

	ck_assert_int_ge(fd, 0);
	close(fd);
	seen_init(&b.seen, threads);
	ck_assert_ptr_nonnull(rb);
	ck_assert_msg(!egpu_ringbuf_add_opts(rb, egpu_obj_map(obj, "drb"), NULL,
					     &b, &o), "%s", egpu_errmsg());
	run_work("on_exit_dev", EGPU_ATTACH_EXIT, threads, 10);
	drain(rb, 100);
	egpu_ringbuf_free(rb);
	ck_assert_uint_eq(b.seen.bad, 0);
	ck_assert_uint_eq(b.seen.dup, 0);
	ck_assert_uint_eq(b.seen.records, threads);
	ck_assert_uint_lt(b.calls, threads / 64);
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	/* the record file's own header first */
	ck_assert_int_eq(fread(&fh, sizeof(fh), 1, f), 1);
	ck_assert_int_eq(memcmp(fh.magic, EGPU_RECORD_FILE_MAGIC, 8), 0);
	ck_assert_int_eq(fseek(f, fh.hdr_size, SEEK_SET), 0);
	while (fread(&hdr, 8, 1, f) == 1) {
		ck_assert_uint_eq(hdr, sizeof(struct event));
		ck_assert_int_eq(fseek(f, sizeof(struct event), SEEK_CUR), 0);
		in_file++;
	}
	fclose(f);
	unlink(path);
	ck_assert_uint_eq(in_file, threads);
	free(b.seen.hit);
}

START_TEST(device_ring_batches_and_file)
{
	batches_and_file(1);
}
END_TEST

/* The same from 3 consumer threads: batches per thread, one file. */
START_TEST(device_ring_batches_and_file_consumer_threads)
{
	batches_and_file(3);
}
END_TEST

/* What gather's warp records said, checked against the kernel's accesses. */
struct warp_check {
	uint64_t out, in;       /* the buffers' device addresses */
	uint32_t n;             /* threads that access */
	bool while_running;     /* a consumer thread drains during the kernel */
	uint8_t *loaded, *stored; /* per thread: times seen */
	uint64_t records, affine, lanes, bad;
};

/* Thread i loads in[j(i)] (kernels.cu's gather): i from j. */
static uint32_t gather_thread(uint64_t j)
{
	return (uint32_t)((j & ~31ull) | ((((j & 31) + 32 - 3) * 23) & 31));
}

static void check_lane(struct warp_check *c, const struct egpu_warp_access *w,
		       uint64_t addr)
{
	uint8_t *seen = w->kind == EGPU_MEM_STORE ? c->stored : c->loaded;
	uint64_t from = w->kind == EGPU_MEM_STORE ? c->out : c->in;
	uint64_t i = (addr - from) / 4;

	if (w->kind == EGPU_MEM_LOAD)
		i = gather_thread(i);
	c->lanes++;
	if (addr < from || (addr - from) % 4 || i >= c->n || seen[i]++)
		c->bad++;
}

static int on_warp(void *user, const void *data, size_t size)
{
	struct warp_check *c = user;
	const struct egpu_warp_access *w = data;
	const uint64_t *addrs = (const uint64_t *)(w + 1);
	uint32_t n = (uint32_t)__builtin_popcount(w->mask), leader;

	c->records++;
	if (size < sizeof(*w) || w->tag != 0xabc || w->size != 4 || !w->mask) {
		c->bad++;
		return 0;
	}
	leader = (uint32_t)__builtin_ctz(w->mask);
	if (w->flags & EGPU_WARP_AFFINE) {
		c->affine++;
		if (size != sizeof(*w) || (n == 1 && w->stride != 0))
			c->bad++;
		for (uint32_t l = leader; l < 32; l++)
			if (w->mask >> l & 1)
				check_lane(c, w, w->base + (uint64_t)((int64_t)(l - leader) * w->stride));
		return 0;
	}
	if (size != sizeof(*w) + 8 * n || addrs[0] != w->base)
		c->bad++;
	else
		for (uint32_t k = 0; k < n; k++)
			check_lane(c, w, addrs[k]);
	return 0;
}

/*
 * Launch @kernel (kernels.cu) of @threads threads on buffers of @out_len
 * and @in_len floats with @progs of @o attached to it (each at its own
 * point), then drain the warp records of @ring into @c (c->out, c->in set
 * here; also while it runs, on a consumer thread, if c->while_running).
 * The ring's drops.
 */
static uint64_t traced_run(egpu_obj *o, const char *const *progs,
			   size_t nprogs, const char *ring, const char *kernel,
			   uint32_t threads, uint32_t n, size_t out_len,
			   size_t in_len, struct warp_check *c)
{
	const struct cu_driver *d = cu();
	egpu_link *links[4];
	CUdeviceptr out, in;
	egpu_ringbuf *rb;
	CUfunction f;
	CUmodule mod;
	size_t len;
	char *ptx = read_all(EVENTS_PTX, &len);
	int nn = (int)n;
	void *gather_args[] = { &out, &in, &nn }, *diverge_args[] = { &out, &nn };
	struct consumer during = { 0 };
	pthread_t t;
	uint64_t drops;

	ck_assert_uint_le(nprogs, 4);
	rb = egpu_ringbuf_new(egpu_obj_map(o, ring), on_warp, c);
	ck_assert_ptr_nonnull(rb);
	for (size_t i = 0; i < nprogs; i++) {
		egpu_prog *p = egpu_obj_prog(o, progs[i]);

		ck_assert_msg(p, "%s", progs[i]);
		links[i] = egpu_attach_kernel(p, kernel,
					      egpu_prog_attach_point(p), NULL);
		ck_assert_msg(links[i], "%s: %s", progs[i], egpu_errmsg());
	}
	ck_assert_msg(!egpu_module_load(ctx, &mod, ptx, len), "%s", egpu_errmsg());
	CK_CU(d->cuModuleGetFunction(&f, mod, kernel));
	CK_CU(d->cuMemAlloc(&out, out_len * sizeof(float)));
	CK_CU(d->cuMemAlloc(&in, in_len * sizeof(float)));
	CK_CU(d->cuMemsetD8(in, 0, in_len * sizeof(float)));
	c->out = out;
	c->in = in;
	during.rb = rb;
	if (c->while_running)
		ck_assert_int_eq(pthread_create(&t, NULL, consume, &during), 0);
	CK_CU(d->cuLaunchKernel(f, threads / BLOCK, 1, 1, BLOCK, 1, 1, 0, NULL,
				strcmp(kernel, "gather") ? diverge_args :
							   gather_args, NULL));
	CK_CU(d->cuCtxSynchronize());
	if (c->while_running) {
		__atomic_store_n(&during.stop, true, __ATOMIC_RELEASE);
		pthread_join(t, NULL);
	}
	drain(rb, 100);
	drops = egpu_ringbuf_drops(rb);
	printf("%s, %s: %llu warp records (%llu affine) for %llu lanes, %llu dropped\n",
	       kernel, progs[0], (unsigned long long)c->records,
	       (unsigned long long)c->affine, (unsigned long long)c->lanes,
	       (unsigned long long)drops);
	egpu_ringbuf_free(rb);
	d->cuMemFree(out);
	d->cuMemFree(in);
	d->cuModuleUnload(mod);
	for (size_t i = 0; i < nprogs; i++)
		egpu_link_destroy(links[i]);
	free(ptx);
	return drops;
}

/*
 * gather traced by @progs of @o into @ring: decompressed, the records give
 * every thread's load and store address exactly once; stores come affine
 * (stride 4, 32 bytes each), the permuted loads with their address lists;
 * the last warp's 25 lanes make partial masks; none dropped.
 */
static void gather_every_address(egpu_obj *o, const char *const *progs,
				 size_t nprogs, const char *ring)
{
	const uint32_t threads = 1u << 20, n = threads - 7;
	struct warp_check c = { .n = n };

	c.loaded = calloc(threads, 1);
	c.stored = calloc(threads, 1);
	ck_assert_uint_eq(traced_run(o, progs, nprogs, ring, "gather", threads,
				     n, threads, threads, &c), 0);
	ck_assert_uint_eq(c.bad, 0);
	ck_assert_uint_eq(c.lanes, 2ull * n);
	ck_assert_uint_eq(c.records, 2ull * (threads / 32));
	ck_assert_uint_eq(c.affine, threads / 32); /* the stores */
	for (uint32_t i = 0; i < n; i++)
		ck_assert(c.loaded[i] == 1 && c.stored[i] == 1);
	free(c.loaded);
	free(c.stored);
}

/* One record per warp-level access (bpf_egpu_trace_warp). */
START_TEST(warp_records_give_every_address)
{
	const char *const progs[] = { "trace_gather" };

	gather_every_address(obj, progs, 1, "dtrace");
}
END_TEST

#define BATCH_OBJ EGPU_TEST_BUILD "/batch.bpf.o"

static egpu_obj *load_batch(void)
{
	egpu_obj *o = egpu_load(ctx, BATCH_OBJ, NULL);

	ck_assert_msg(o, "load: %s", egpu_errmsg());
	return o;
}

/* The same with reservations batched in spans (bpf_egpu_trace_warp_batch). */
START_TEST(batched_warp_records_give_every_address)
{
	const char *const progs[] = { "batch_mem", "batch_exit" };

	gather_every_address(load_batch(), progs, 2, "btrace");
}
END_TEST

/*
 * Batched into a ring of 64 KiB, far too small: every record that arrives
 * is right and unique, and the records received and the drops counted
 * add up to the warp accesses exactly (each span's unused rest, closed by
 * a discard record, counts as neither).
 */
START_TEST(batched_warp_records_exact_when_dropping)
{
	const char *const progs[] = { "tiny_mem", "tiny_exit" };
	const uint32_t threads = 1u << 20, n = threads - 7;
	struct warp_check c = { .n = n };
	uint64_t drops;

	c.loaded = calloc(threads, 1);
	c.stored = calloc(threads, 1);
	drops = traced_run(load_batch(), progs, 2, "btiny", "gather", threads, n,
			   threads, threads, &c);
	ck_assert_uint_eq(c.bad, 0);
	ck_assert_uint_gt(drops, 0);
	ck_assert_uint_gt(c.records, 0);
	ck_assert_uint_eq(c.records + drops, 2ull * (threads / 32));
	free(c.loaded);
	free(c.stored);
}
END_TEST

/* Stores of kernels.cu's diverge by thread @i < @n: slots k * n + i. */
static uint32_t diverge_stores(uint32_t i)
{
	return i & 1 ? 1 + (i & 2) + ((i & 31) == 31) : 1;
}

/*
 * Batched records of diverge, whose odd and even lanes store apart and
 * whose odd lanes loop a different number of times: the lanes of a warp
 * lead records in groups of their own, each from its own span, and every
 * store arrives exactly once, affine (partial masks, stride 4; lane 31
 * alone, stride 0).
 */
START_TEST(batched_warp_records_of_divergent_lanes)
{
	const char *const progs[] = { "batch_mem", "batch_exit" };
	const uint32_t threads = 1u << 18, n = threads - 5;
	struct warp_check c = { .n = 4 * n };
	uint64_t lanes = 0;

	c.stored = calloc(4 * (size_t)n, 1);
	ck_assert_uint_eq(traced_run(load_batch(), progs, 2, "btrace",
				     "diverge", threads, n, 4 * (size_t)n, 1,
				     &c), 0);
	ck_assert_uint_eq(c.bad, 0);
	ck_assert_uint_eq(c.affine, c.records);
	for (uint32_t i = 0; i < n; i++) {
		lanes += diverge_stores(i);
		for (uint32_t k = 0; k < 4; k++)
			ck_assert_uint_eq(c.stored[(size_t)k * n + i],
					  k < diverge_stores(i));
	}
	ck_assert_uint_eq(c.lanes, lanes);
	free(c.stored);
}
END_TEST

/*
 * Batched into a lossless ring of 256 KiB drained while the kernel runs:
 * barrier_rounds, whose blocks meet at __syncthreads between rounds of
 * two stores, 4 MiB of records. Every store arrives once, none dropped:
 * a span whose unwritten rest a warp kept across a barrier would hold the
 * consumer back while the warps it waits for wait for room behind it,
 * until the bound (so a lossless ring's spans hold just their record).
 */
START_TEST(batched_warp_records_lossless_barriers)
{
	const char *const progs[] = { "ll_mem", "ll_exit" };
	const uint32_t threads = 1u << 19, rounds = 8, n = threads - 5;
	struct warp_check c = { .n = rounds * n, .while_running = true };

	c.stored = calloc((size_t)rounds * n, 1);
	ck_assert_uint_eq(traced_run(load_batch(), progs, 2, "blossless",
				     "barrier_rounds", threads, n,
				     (size_t)rounds * n, 1, &c), 0);
	ck_assert_uint_eq(c.bad, 0);
	ck_assert_uint_eq(c.lanes, (uint64_t)rounds * n);
	for (size_t i = 0; i < (size_t)rounds * n; i++)
		ck_assert_uint_eq(c.stored[i], 1);
	free(c.stored);
}
END_TEST

START_TEST(exact_with_a_consumer_thread_host)
{
	exact_with_a_consumer_thread("on_exit", "rb");
}
END_TEST

START_TEST(exact_with_a_consumer_thread_device)
{
	exact_with_a_consumer_thread("on_exit_dev", "drb");
}
END_TEST

/* Host memory the GPU reads: the consumer's "done" flag for wait_host. */
struct host_flag {
	unsigned *host;
	CUdeviceptr dev;
};

static void host_flag_new(struct host_flag *f)
{
	const struct cu_driver *d = cu();

	f->host = aligned_alloc(4096, 4096);
	ck_assert_ptr_nonnull(f->host);
	*f->host = 0;
	CK_CU(d->cuMemHostRegister(f->host, 4096, CU_MEMHOSTREGISTER_DEVICEMAP));
	CK_CU(d->cuMemHostGetDevicePointer(&f->dev, f->host, 0));
}

static void host_flag_free(struct host_flag *f)
{
	cu()->cuMemHostUnregister(f->host);
	free(f->host);
}

/* A consumer thread that raises the flag once it has @want records. */
struct signaller {
	egpu_ringbuf *rb;
	struct seen *seen;
	unsigned *flag;
	uint64_t want, at_flag;
	bool stop;
};

static void *consume_and_signal(void *arg)
{
	struct signaller *c = arg;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		ck_assert_int_ge(egpu_ringbuf_poll(c->rb, 1), 0);
		if (!c->at_flag && c->seen->records >= c->want) {
			c->at_flag = c->seen->records;
			__atomic_store_n(c->flag, 1u, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

/*
 * The consumer takes records while the kernel that writes them runs:
 * wait_host's threads emit at entry (@prog, into @ring), then its thread 0
 * waits (up to 20 s) for the flag the consumer raises after half of the
 * records arrived. The kernel saw the flag, so the consumer had them before
 * the kernel ended: for a ring in GPU memory, the copies on the map's
 * stream ran beside the kernel.
 */
static void consumed_while_the_kernel_runs(const char *prog, const char *ring)
{
	const uint32_t threads = 64 * BLOCK;
	const struct cu_driver *d = cu();
	unsigned long long timeout_ns = 20000000000ull;
	struct signaller c = { .want = threads / 2 };
	struct host_flag flag;
	unsigned seen_flag = 0;
	struct seen s;
	CUdeviceptr out;
	CUfunction f;
	CUmodule mod;
	pthread_t t;
	size_t len;
	char *ptx = read_all(EVENTS_PTX, &len);
	void *args[] = { &flag.dev, &timeout_ns, &out };

	seen_init(&s, threads);
	host_flag_new(&flag);
	c.seen = &s;
	c.flag = flag.host;
	c.rb = egpu_ringbuf_new(egpu_obj_map(obj, ring), on_event, &s);
	ck_assert_ptr_nonnull(c.rb);
	ck_assert_msg(egpu_attach_kernel(egpu_obj_prog(obj, prog),
					 "wait_host", EGPU_ATTACH_ENTRY, NULL),
		      "%s", egpu_errmsg());
	ck_assert_msg(!egpu_module_load(ctx, &mod, ptx, len), "%s", egpu_errmsg());
	CK_CU(d->cuModuleGetFunction(&f, mod, "wait_host"));
	CK_CU(d->cuMemAlloc(&out, sizeof(unsigned)));
	CK_CU(d->cuMemsetD8(out, 0xff, sizeof(unsigned)));
	ck_assert_int_eq(pthread_create(&t, NULL, consume_and_signal, &c), 0);
	CK_CU(d->cuLaunchKernel(f, threads / BLOCK, 1, 1, BLOCK, 1, 1, 0, NULL,
				args, NULL));
	CK_CU(d->cuCtxSynchronize());
	CK_CU(d->cuMemcpyDtoH(&seen_flag, out, sizeof(seen_flag)));
	__atomic_store_n(&c.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	drain(c.rb, 0);
	printf("%s: consumed before the kernel ended: %llu of %u records\n",
	       ring, (unsigned long long)c.at_flag, threads);
	ck_assert_msg(seen_flag == 1,
		      "the kernel ended without the consumer's flag (%u): records were not consumed while it ran",
		      seen_flag);
	ck_assert_uint_ge(c.at_flag, threads / 2);
	ck_assert_uint_eq(s.bad, 0);
	ck_assert_uint_eq(s.dup, 0);
	ck_assert_uint_eq(s.records + egpu_ringbuf_drops(c.rb), threads);
	d->cuMemFree(out);
	d->cuModuleUnload(mod);
	egpu_ringbuf_free(c.rb);
	host_flag_free(&flag);
	free(s.hit);
	free(ptx);
}

START_TEST(consumed_while_the_kernel_runs_host)
{
	consumed_while_the_kernel_runs("at_entry", "rb");
}
END_TEST

START_TEST(consumed_while_the_kernel_runs_device)
{
	consumed_while_the_kernel_runs("at_entry_dev", "drb");
}
END_TEST

static uint64_t run_gpu(const char *prog, uint64_t n, uint64_t tag)
{
	uint64_t args[2] = { n, tag };
	EGPU_OPTS(egpu_run_opts, ro, .backend = EGPU_BACKEND_GPU, .ctx = args,
		  .ctx_len = sizeof(args));

	ck_assert_msg(!egpu_prog_run(egpu_obj_prog(obj, prog), &ro), "%s: %s",
		      prog, egpu_errmsg());
	return ro.retval;
}

static int on_word(void *user, const void *data, size_t size)
{
	uint64_t *got = user;

	ck_assert_uint_ge(size, 8);
	got[++got[0]] = *(const uint64_t *)data;
	return 0;
}

/* Every ring helper in one-thread GPU runs, errors as in Linux. */
START_TEST(direct_runs_use_every_helper)
{
	uint64_t got[16] = { 0 }, perf[4] = { 0 }, rb1527[4] = { 0 };
	egpu_ringbuf *rb = egpu_ringbuf_new(egpu_obj_map(obj, "rb"), on_word, got);

	ck_assert_int_eq(egpu_ringbuf_add(rb, egpu_obj_map(obj, "perf"), on_word,
					  perf), 0);
	ck_assert_int_eq(egpu_ringbuf_add(rb, egpu_obj_map(obj, "gpurb"), on_word,
					  rb1527), 0);
	ck_assert_uint_eq(run_gpu("out", 3, 9), 3);
	ck_assert_uint_eq(run_gpu("resv", 0, 0), 2);
	ck_assert_uint_eq(run_gpu("bad_calls", 0, 0), 0);
	ck_assert_uint_eq(run_gpu("perf_out", 0, 0), 0);
	ck_assert_int_eq(egpu_ringbuf_poll(rb, 100), 7);
	ck_assert_uint_eq(got[0], 5);
	ck_assert_uint_eq(got[3], 2);   /* out: tid 0, 1, 2 */
	ck_assert_uint_eq(got[4], 100); /* resv: 100, (101 discarded), 102 */
	ck_assert_uint_eq(got[5], 102);
	ck_assert_uint_eq(perf[1], 42);
	ck_assert_uint_eq(rb1527[1], 43);
	/* The map now belongs to the GPU: CPU producers are refused. */
	{
		uint64_t args[2] = { 2, 0 };
		EGPU_OPTS(egpu_run_opts, ro, .ctx = args, .ctx_len = sizeof(args));

		ck_assert_int_eq(egpu_prog_run(egpu_obj_prog(obj, "out"), &ro), 0);
		ck_assert_uint_eq(ro.retval, 0);
	}
	egpu_ringbuf_free(rb);
}
END_TEST

struct lines {
	char text[64][96];
	struct egpu_print_info info[64];
	int n;
};

static void on_line(void *user, const char *line, const struct egpu_print_info *info)
{
	struct lines *l = user;

	ck_assert_int_lt(l->n, 64);
	snprintf(l->text[l->n], sizeof(l->text[0]), "%s", line);
	l->info[l->n++] = *info;
}

START_TEST(direct_run_prints)
{
	struct lines l = { 0 };

	ck_assert_int_eq(egpu_print_set_callback(ctx, on_line, &l), 0);
	run_gpu("prints", 0, 0);
	ck_assert_int_eq(egpu_print_poll(ctx, 1000), 3);
	ck_assert_str_eq(l.text[0], "printk -3 7 str");
	ck_assert_str_eq(l.text[1], "vprintk 1 2 3 4 -5");
	ck_assert_str_eq(l.text[2], "puts line");
	ck_assert_str_eq(l.info[0].obj, "events.bpf.o");
	ck_assert_uint_eq(l.info[2].thread[0], 0);
	/* a direct run has no kernel */
	ck_assert_uint_eq(l.info[0].kernel_id, EGPU_PRINT_NO_KERNEL);
	ck_assert_uint_eq(egpu_print_drops(ctx), 0);
}
END_TEST

/* The format on the stack travels in the record: no global data named. */
START_TEST(direct_run_prints_from_the_stack)
{
	struct lines l = { 0 };

	ck_assert_int_eq(egpu_print_set_callback(ctx, on_line, &l), 0);
	run_gpu("prints_from_stack", 0, 0);
	ck_assert_int_eq(egpu_print_poll(ctx, 1000), 1);
	ck_assert_str_eq(l.text[0], "stack 5 of 6");
	ck_assert_ptr_null(l.info[0].obj);
	ck_assert_uint_eq(egpu_print_drops(ctx), 0);
}
END_TEST

/* Thread 0 of each of 8 blocks prints from an entry probe. */
START_TEST(probe_prints_once_per_block)
{
	struct lines l = { 0 };
	bool block[8] = { false };

	ck_assert_int_eq(egpu_print_set_callback(ctx, on_line, &l), 0);
	run_work("on_entry", EGPU_ATTACH_ENTRY, 8 * BLOCK, 1);
	while (egpu_print_poll(ctx, 100) > 0)
		;
	ck_assert_int_eq(l.n, 8);
	for (int i = 0; i < 8; i++) {
		unsigned b, k;

		ck_assert_int_eq(sscanf(l.text[i], "block %u of kernel %u", &b, &k), 2);
		ck_assert_uint_eq(k, 0);
		/* the record names the kernel its probe saw in ctx */
		ck_assert_uint_eq(l.info[i].kernel_id, k);
		ck_assert_uint_lt(b, 8);
		ck_assert_uint_eq(l.info[i].block[0], b);
		ck_assert_uint_eq(l.info[i].thread[0], 0);
		ck_assert(!block[b]);
		block[b] = true;
	}
}
END_TEST

int main(void)
{
	Suite *s;
	TCase *tc;

	tu_require_gpu();
	s = suite_create("events_gpu");
	tc = tcase_create("events_gpu");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, one_record_per_thread);
	tcase_add_test(tc, sizes_differing_within_a_warp);
	tcase_add_test(tc, tiny_ring_counts_every_drop_host);
	tcase_add_test(tc, exact_with_a_consumer_thread_host);
	tcase_add_test(tc, consumed_while_the_kernel_runs_host);
	tcase_add_test(tc, device_ring_every_thread_of_a_large_grid);
	tcase_add_test(tc, device_ring_reserve_and_submit);
	tcase_add_test(tc, device_ring_keeps_each_threads_order);
	tcase_add_test(tc, tiny_ring_counts_every_drop_device);
	tcase_add_test(tc, exact_with_a_consumer_thread_device);
	tcase_add_test(tc, consumed_while_the_kernel_runs_device);
	tcase_add_test(tc, device_ring_exact_per_shard);
	tcase_add_test(tc, device_ring_batches_and_file);
	tcase_add_test(tc, device_ring_exact_per_shard_consumer_threads);
	tcase_add_test(tc, device_ring_batches_and_file_consumer_threads);
	tcase_add_test(tc, warp_records_give_every_address);
	tcase_add_test(tc, batched_warp_records_give_every_address);
	tcase_add_test(tc, batched_warp_records_exact_when_dropping);
	tcase_add_test(tc, batched_warp_records_of_divergent_lanes);
	tcase_add_test(tc, batched_warp_records_lossless_barriers);
	tcase_add_test(tc, direct_runs_use_every_helper);
	tcase_add_test(tc, direct_run_prints);
	tcase_add_test(tc, direct_run_prints_from_the_stack);
	tcase_add_test(tc, probe_prints_once_per_block);
	suite_add_tcase(s, tc);
	/* A CUDA context does not survive fork(): run the tests in-process. */
	return tu_run_suite(s, false);
}
