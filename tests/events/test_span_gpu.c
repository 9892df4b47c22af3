// SPDX-License-Identifier: MIT
/*
 * Spans on a GPU (bpf_egpu_trace_span; ctest label gpu, skipped without
 * one): known kernels traced, decoded with egpu_span_next, and every lane
 * access checked against the thread that made it (the span names its
 * warp): each arrives once, in its thread's order, none dropped, on the
 * legacy default stream and in a CUDA graph on a non-blocking stream;
 * divergent lanes and early exits; spans left open by a probe without its
 * exit probe taken by egpu_ringbuf_reclaim; exact accounting in a ring
 * that drops. The trap case (CK_RUN_CASE=trap, its own ctest: a trap ends
 * the process's CUDA context) reclaims a host ring after the grid died.
 * The same kernels through the splicer's trace mode (egpu_mem_trace_enable,
 * no probe program: the records stored at the access), with the same
 * checks (CK_RUN_CASE=trace, and trap_trace for its trap), and a kernel
 * whose blocks meet at barriers between rounds of stores, traced losslessly.
 */
#include <check.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/cu.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "test_util.h"

#define SPAN_OBJ EGPU_TEST_BUILD "/span.bpf.o"
#define EVENTS_PTX EGPU_TEST_BUILD "/kernels.ptx"
#define BLOCK 256

static egpu_ctx *ctx;
static egpu_obj *obj;

static void setup(void)
{
	ctx = egpu_ctx_new(NULL);
	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, SPAN_OBJ, NULL);
	ck_assert_msg(obj, "load: %s", egpu_errmsg());
}

static void teardown(void)
{
	egpu_ctx_free(ctx);
}

/* What the decoded records said, against the kernel's accesses. */
struct span_check {
	const char *kernel;
	uint64_t out, in;  /* the buffers' device addresses */
	uint32_t n;        /* threads that access */
	uint8_t *loaded, *stored; /* per element: times seen */
	uint64_t warp_recs, affine, lanes, bytes, spans, bad, order;
	uint64_t copied; /* bytes of records copied out of GPU memory */
	/* Lossless rings: a thread drains while the kernel runs, or no one
	 * polls until it ended; the launch's time. */
	enum { AFTER, WHILE_RUNNING, NEVER_WHILE_RUNNING } drain;
	double launch_s;
};

/* gather's thread i loads in[j(i)]: lane l of a warp reads lane 7 l + 3. */
static uint64_t gather_src(uint64_t i)
{
	return (i & ~31ull) | ((7 * (i & 31) + 3) & 31);
}

/* Whether thread @t's access of kind @kind at @addr is one it makes next. */
static bool span_lane_ok(struct span_check *c, uint64_t t, uint32_t kind,
			 uint64_t addr)
{
	uint64_t k, i;

	if (t >= c->n)
		return false;
	if (kind == EGPU_MEM_LOAD) /* gather: load first */
		return addr == c->in + 4 * gather_src(t) && !c->loaded[t]++;
	if (kind != EGPU_MEM_STORE || addr < c->out || (addr - c->out) % 4)
		return false;
	i = (addr - c->out) / 4;
	k = i / c->n;
	if (i % c->n != t || c->stored[i]++)
		return false;
	/* In its thread's order: gather's load before, diverge's k - 1. */
	if (!strcmp(c->kernel, "gather") && !c->loaded[t])
		c->order++;
	if (k && !c->stored[i - c->n])
		c->order++;
	return true;
}

static int on_span(void *user, const void *data, size_t size)
{
	struct span_check *c = user;
	struct egpu_span_iter it;
	struct egpu_span_info info;
	struct egpu_warp_rec rec;
	int got;

	c->spans++;
	c->bytes += size + 8;
	if (egpu_span_begin(&it, data, size, &info)) {
		c->bad++;
		return 0;
	}
	while ((got = egpu_span_next(&it, &rec)) == 1) {
		c->warp_recs++;
		c->affine += rec.affine;
		if (rec.size != 4)
			c->bad++;
		for (uint32_t m = rec.mask; m; m &= m - 1) {
			uint32_t lane = (uint32_t)__builtin_ctz(m);
			uint64_t t = (uint64_t)info.block * BLOCK +
				     info.warp * 32 + lane;

			c->lanes++;
			if (!span_lane_ok(c, t, rec.kind, rec.addr[lane]))
				c->bad++;
		}
	}
	if (got < 0)
		c->bad++;
	return 0;
}

static void drain(egpu_ringbuf *rb)
{
	int n;

	while ((n = egpu_ringbuf_consume(rb)) > 0)
		;
	ck_assert_msg(n == 0, "draining: %d: %s", n, egpu_errmsg());
}

/* A thread polling a ring while the kernel runs (one poller at a time). */
struct drainer {
	egpu_ringbuf *rb;
	int stop, err;
	pthread_t t;
};

static void *drain_loop(void *arg)
{
	struct drainer *dr = arg;

	while (!__atomic_load_n(&dr->stop, __ATOMIC_ACQUIRE)) {
		int n = egpu_ringbuf_poll(dr->rb, 1);

		if (n < 0) {
			dr->err = n;
			break;
		}
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* How a traced kernel is launched. */
enum launch { LEGACY_STREAM, NONBLOCKING_STREAM, GRAPH };

typedef CUresult (*begin_capture_fn)(CUstream, CUstreamCaptureMode);
typedef CUresult (*end_capture_fn)(CUstream, CUgraph *);
typedef CUresult (*instantiate_fn)(CUgraphExec *, CUgraph, unsigned long long);
typedef CUresult (*graph_launch_fn)(CUgraphExec, CUstream);
typedef CUresult (*graph_exec_destroy_fn)(CUgraphExec);
typedef CUresult (*graph_destroy_fn)(CUgraph);

static void *driver_sym(const char *name)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *f = lib ? dlsym(lib, name) : NULL;

	ck_assert_msg(f, "libcuda: %s", name);
	return f;
}

/* @f launched through a graph captured on a non-blocking stream. */
static void launch_in_graph(CUfunction f, uint32_t blocks, void **args)
{
	const struct cu_driver *d = cu();
	begin_capture_fn begin = (begin_capture_fn)driver_sym("cuStreamBeginCapture_v2");
	end_capture_fn end = (end_capture_fn)driver_sym("cuStreamEndCapture");
	instantiate_fn inst = (instantiate_fn)driver_sym("cuGraphInstantiateWithFlags");
	graph_launch_fn launch = (graph_launch_fn)driver_sym("cuGraphLaunch");
	CUstream s;
	CUgraph g;
	CUgraphExec ge;

	CK_CU(d->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK_CU(begin(s, CU_STREAM_CAPTURE_MODE_RELAXED));
	CK_CU(d->cuLaunchKernel(f, blocks, 1, 1, BLOCK, 1, 1, 0, s, args, NULL));
	CK_CU(end(s, &g));
	CK_CU(inst(&ge, g, 0));
	CK_CU(launch(ge, s));
	CK_CU(d->cuStreamSynchronize(s));
	((graph_exec_destroy_fn)driver_sym("cuGraphExecDestroy"))(ge);
	((graph_destroy_fn)driver_sym("cuGraphDestroy"))(g);
	CK_CU(d->cuStreamDestroy(s));
}

/* @f launched on a stream of its own that does not wait for stream 0. */
static void launch_nonblocking(CUfunction f, uint32_t blocks, void **args)
{
	const struct cu_driver *d = cu();
	CUstream s;

	CK_CU(d->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK_CU(d->cuLaunchKernel(f, blocks, 1, 1, BLOCK, 1, 1, 0, s, args, NULL));
	CK_CU(d->cuStreamSynchronize(s));
	CK_CU(d->cuStreamDestroy(s));
}

/*
 * Launch c->kernel (kernels.cu) of @threads threads on buffers of
 * @out_len floats with @progs attached (none: the splicer's trace mode
 * into @ring), then drain @ring into @c, and reclaim what is left open.
 * The ring's drops.
 */
static uint64_t span_run(const char *const *progs, size_t nprogs,
			 const char *ring, uint32_t threads, size_t out_len,
			 enum launch how, struct span_check *c)
{
	const struct cu_driver *d = cu();
	egpu_link *links[2];
	CUdeviceptr out, in;
	egpu_ringbuf *rb = egpu_ringbuf_new(egpu_obj_map(obj, ring), on_span, c);
	CUfunction f;
	CUmodule mod;
	size_t len;
	char *ptx = tu_read_file(EVENTS_PTX, &len);
	int nn = (int)c->n;
	void *two[] = { &out, &in, &nn }, *one[] = { &out, &nn };
	void **args = strcmp(c->kernel, "gather") ? one : two;
	struct drainer dr = { 0 };
	EGPU_OPTS(egpu_ringbuf_stats, st);
	uint64_t drops;
	double t0;
	CUresult rc;

	ck_assert_ptr_nonnull(rb);
	if (!nprogs)
		ck_assert_msg(!egpu_mem_trace_enable(ctx, egpu_obj_map(obj, ring),
						     NULL), "%s", egpu_errmsg());
	for (size_t i = 0; i < nprogs; i++) {
		egpu_prog *p = egpu_obj_prog(obj, progs[i]);

		ck_assert_msg(p, "%s", progs[i]);
		links[i] = egpu_attach_kernel(p, c->kernel,
					      egpu_prog_attach_point(p), NULL);
		ck_assert_msg(links[i], "%s: %s", progs[i], egpu_errmsg());
	}
	ck_assert_msg(!egpu_module_load(ctx, &mod, ptx, len), "%s", egpu_errmsg());
	CK_CU(d->cuModuleGetFunction(&f, mod, c->kernel));
	CK_CU(d->cuMemAlloc(&out, out_len * sizeof(float)));
	CK_CU(d->cuMemAlloc(&in, threads * sizeof(float)));
	CK_CU(d->cuMemsetD8(in, 0, threads * sizeof(float)));
	c->out = out;
	c->in = in;
	c->loaded = calloc(threads, 1);
	c->stored = calloc(out_len, 1);
	dr.rb = rb;
	if (c->drain == WHILE_RUNNING)
		ck_assert_int_eq(pthread_create(&dr.t, NULL, drain_loop, &dr), 0);
	t0 = now_s();
	if (how == GRAPH) {
		launch_in_graph(f, threads / BLOCK, args);
	} else if (how == NONBLOCKING_STREAM) {
		launch_nonblocking(f, threads / BLOCK, args);
	} else {
		CK_CU(d->cuLaunchKernel(f, threads / BLOCK, 1, 1, BLOCK, 1, 1,
					0, NULL, args, NULL));
	}
	rc = d->cuCtxSynchronize();
	c->launch_s = now_s() - t0;
	if (c->drain == WHILE_RUNNING) {
		__atomic_store_n(&dr.stop, 1, __ATOMIC_RELEASE);
		pthread_join(dr.t, NULL);
		ck_assert_msg(!dr.err, "polling while running: %d", dr.err);
	}
	if (strcmp(c->kernel, "trap_after"))
		CK_CU(rc);
	else /* the trap ended the grid and the context */
		ck_assert_int_ne(rc, CUDA_SUCCESS);
	if (rc == CUDA_SUCCESS)
		drain(rb);
	ck_assert_msg(egpu_ringbuf_reclaim(rb) >= 0, "%s", egpu_errmsg());
	drops = egpu_ringbuf_drops(rb);
	ck_assert_int_eq(egpu_ringbuf_stats(rb, &st), 0);
	c->copied = st.copied;
	printf("%s, %s: %llu spans, %llu warp records (%llu affine), %llu lanes, "
	       "%llu bytes: %.3f bytes per lane access, %llu dropped, launch %.3f s, "
	       "%llu bytes copied out (%.2fx)\n",
	       c->kernel, nprogs ? progs[0] : "trace mode",
	       (unsigned long long)c->spans,
	       (unsigned long long)c->warp_recs, (unsigned long long)c->affine,
	       (unsigned long long)c->lanes, (unsigned long long)c->bytes,
	       c->lanes ? (double)c->bytes / (double)c->lanes : 0.0,
	       (unsigned long long)drops, c->launch_s,
	       (unsigned long long)c->copied,
	       c->bytes ? (double)c->copied / (double)c->bytes : 0.0);
	egpu_ringbuf_free(rb);
	if (rc == CUDA_SUCCESS) {
		d->cuMemFree(out);
		d->cuMemFree(in);
		d->cuModuleUnload(mod);
	}
	for (size_t i = 0; i < nprogs; i++)
		egpu_link_destroy(links[i]);
	free(ptx);
	return drops;
}

/*
 * A trace drained after its kernel ended, from a ring in GPU memory that
 * held it whole: every span was published and counted before the pass,
 * so each crossed the bus once (docs/events.md, "Copied once"; twice
 * before spans counted).
 */
static void assert_copied_once(const struct span_check *c, const char *ring)
{
	if (strcmp(ring, "strace") || c->drain != AFTER)
		return;
	ck_assert_msg(c->copied == c->bytes,
		      "%s: %llu bytes of spans copied out for %llu delivered",
		      c->kernel, (unsigned long long)c->copied,
		      (unsigned long long)c->bytes);
}

static void span_check_free(struct span_check *c)
{
	free(c->loaded);
	free(c->stored);
}

/*
 * gather traced: every thread's load and store arrive once, the load
 * first, the stores affine (16 bytes a warp), none dropped; the last
 * block's threads past n return early.
 */
static void gather_exact(const char *const *progs, size_t nprogs,
			 const char *ring, enum launch how)
{
	const uint32_t threads = 1u << 20;
	struct span_check c = { .kernel = "gather", .n = threads - 7 };

	if (strcmp(ring, "strace"))
		c.drain = WHILE_RUNNING;
	ck_assert_uint_eq(span_run(progs, nprogs, ring, threads, threads,
				   how, &c), 0);
	ck_assert_uint_eq(c.bad, 0);
	ck_assert_uint_eq(c.order, 0);
	ck_assert_uint_eq(c.lanes, 2ull * c.n);
	ck_assert_uint_eq(c.warp_recs, 2ull * (threads / 32));
	ck_assert_uint_eq(c.affine, threads / 32);
	for (uint32_t i = 0; i < c.n; i++)
		ck_assert(c.loaded[i] == 1 && c.stored[i] == 1);
	assert_copied_once(&c, ring);
	span_check_free(&c);
}

START_TEST(every_address_once_in_order_legacy_stream)
{
	const char *const progs[] = { "span_mem", "span_exit" };

	gather_exact(progs, 2, "strace", LEGACY_STREAM);
}
END_TEST

START_TEST(every_address_once_in_order_cuda_graph)
{
	const char *const progs[] = { "span_mem", "span_exit" };

	gather_exact(progs, 2, "strace", GRAPH);
}
END_TEST

/* No exit probe: every span stays open until egpu_ringbuf_reclaim. */
START_TEST(spans_never_flushed_are_reclaimed)
{
	const char *const progs[] = { "span_mem" };

	gather_exact(progs, 1, "strace", LEGACY_STREAM);
}
END_TEST

/* diverge's thread i < n: its stores k * n + i (kernels.cu). */
static uint32_t diverge_stores(uint32_t i)
{
	return i & 1 ? 1 + (i & 2) + ((i & 31) == 31) : 1;
}

/*
 * diverge: odd and even lanes store apart, odd ones loop 1, 3 or 4 times:
 * lanes lead records of their own in spans of their own, and every store
 * arrives once, in each thread's order.
 */
static void diverge_exact(const char *const *progs, size_t nprogs,
			  const char *ring)
{
	const uint32_t threads = 1u << 18;
	struct span_check c = { .kernel = "diverge", .n = threads - 5 };
	uint64_t lanes = 0;

	if (strcmp(ring, "strace"))
		c.drain = WHILE_RUNNING;
	ck_assert_uint_eq(span_run(progs, nprogs, ring, threads,
				   4 * (size_t)threads, LEGACY_STREAM, &c), 0);
	ck_assert_uint_eq(c.bad, 0);
	ck_assert_uint_eq(c.order, 0);
	for (uint32_t i = 0; i < c.n; i++) {
		lanes += diverge_stores(i);
		for (uint32_t k = 0; k < 4; k++)
			ck_assert_uint_eq(c.stored[(size_t)k * c.n + i],
					  k < diverge_stores(i));
	}
	ck_assert_uint_eq(c.lanes, lanes);
	assert_copied_once(&c, ring);
	span_check_free(&c);
}

/*
 * barrier_rounds (trace mode, lossless, a trace of 4 MiB through a
 * 256 KiB ring drained while the kernel runs): warps keep spans of two
 * records between barriers, publish them before each,
 * and every store arrives once, in each thread's order, none dropped (a
 * span held at the barrier would make the warps it waits for wait out
 * the bound, and drop).
 */
static void barrier_rounds_exact(const char *ring)
{
	const uint32_t threads = 1u << 19, rounds = 8;
	struct span_check c = { .kernel = "barrier_rounds", .n = threads - 5,
				.drain = WHILE_RUNNING };

	ck_assert_uint_eq(span_run(NULL, 0, ring, threads,
				   rounds * (size_t)threads, LEGACY_STREAM, &c), 0);
	ck_assert_uint_eq(c.bad, 0);
	ck_assert_uint_eq(c.order, 0);
	ck_assert_uint_eq(c.lanes, (uint64_t)rounds * c.n);
	for (size_t i = 0; i < (size_t)rounds * c.n; i++)
		ck_assert_uint_eq(c.stored[i], 1);
	/* more records than spans: spans of many records */
	ck_assert_uint_gt(c.warp_recs, c.spans);
	span_check_free(&c);
}

START_TEST(divergent_lanes_once_in_order)
{
	const char *const progs[] = { "span_mem", "span_exit" };

	diverge_exact(progs, 2, "strace");
}
END_TEST

/* A ring of 64 KiB: what arrives is right, records + drops = accesses. */
static void gather_dropping(const char *const *progs, size_t nprogs)
{
	const uint32_t threads = 1u << 20;
	struct span_check c = { .kernel = "gather", .n = threads - 7 };
	uint64_t drops = span_run(progs, nprogs, "stiny", threads, threads,
				  LEGACY_STREAM, &c);

	/* c.order may count stores whose loads were dropped: not asserted. */
	ck_assert_uint_eq(c.bad, 0);
	ck_assert_uint_gt(drops, 0);
	ck_assert_uint_gt(c.warp_recs, 0);
	ck_assert_uint_eq(c.warp_recs + drops, 2ull * (threads / 32));
	span_check_free(&c);
}

START_TEST(exact_when_dropping)
{
	const char *const progs[] = { "tiny_mem", "tiny_exit" };

	gather_dropping(progs, 2);
}
END_TEST

/*
 * Lossless (EGPU_F_RING_LOSSLESS), a ring of 256 KiB for a trace of
 * 2 MiB drained while the kernel runs: every address once, in order, 0
 * dropped, on the legacy stream, in a graph, and with divergent lanes.
 */
START_TEST(lossless_every_address_legacy_stream)
{
	const char *const progs[] = { "ll_mem", "ll_exit" };

	gather_exact(progs, 2, "slossless", LEGACY_STREAM);
}
END_TEST

START_TEST(lossless_every_address_cuda_graph)
{
	const char *const progs[] = { "ll_mem", "ll_exit" };

	gather_exact(progs, 2, "slossless", GRAPH);
}
END_TEST

START_TEST(lossless_every_address_nonblocking_stream)
{
	const char *const progs[] = { "ll_mem", "ll_exit" };

	gather_exact(progs, 2, "slossless", NONBLOCKING_STREAM);
}
END_TEST

START_TEST(lossless_divergent_lanes)
{
	const char *const progs[] = { "ll_mem", "ll_exit" };

	diverge_exact(progs, 2, "slossless");
}
END_TEST

/*
 * Lossless, 64 KiB, a wait of 200 ms, no one polling while the kernel
 * runs: the launch costs about one wait, not one per record (no hang);
 * what arrives afterwards is right, and records + drops = accesses.
 */
START_TEST(lossless_stopped_consumer_bounded)
{
	const char *const progs[] = { "stopped_mem", "stopped_exit" };
	const uint32_t threads = 1u << 20;
	struct span_check c = { .kernel = "gather", .n = threads - 7,
				.drain = NEVER_WHILE_RUNNING };
	uint64_t drops;

	ck_assert_int_eq(egpu_map_set_ring_wait(egpu_obj_map(obj, "sstopped"), 200), 0);
	drops = span_run(progs, 2, "sstopped", threads, threads, LEGACY_STREAM, &c);
	ck_assert_uint_eq(c.bad, 0);
	ck_assert_uint_gt(drops, 0);
	ck_assert_uint_eq(c.warp_recs + drops, 2ull * (threads / 32));
	ck_assert_msg(c.launch_s >= 0.2 && c.launch_s < 5.0,
		      "the launch took %.3f s for a wait of 0.2 s", c.launch_s);
	/* Too late once on the GPU. */
	ck_assert_int_eq(egpu_map_set_ring_wait(egpu_obj_map(obj, "sstopped"), 1),
			 EGPU_EBUSY);
	span_check_free(&c);
}
END_TEST

/*
 * A trap ends the grid with spans open and the context unusable: the
 * host ring is still reclaimed, without hanging, and what arrives is
 * right and unique.
 */
static void trap_no_hole(const char *const *progs, size_t nprogs)
{
	const uint32_t threads = 1u << 18;
	struct span_check c = { .kernel = "trap_after", .n = threads - 3 };

	span_run(progs, nprogs, "shost", threads, threads, LEGACY_STREAM, &c);
	ck_assert_uint_eq(c.bad, 0);
	ck_assert_uint_le(c.lanes, c.n);
	span_check_free(&c);
}

START_TEST(trap_leaves_no_hole)
{
	const char *const progs[] = { "host_mem", "host_exit" };

	trap_no_hole(progs, 2);
}
END_TEST

/*
 * The splicer's trace mode: the same kernels, the same checks, kept in
 * GPU memory and lossless (drained while running).
 */
static const struct {
	const char *kernel, *ring;
	enum launch how;
} trace_cases[] = {
	{ "gather", "strace", LEGACY_STREAM },
	{ "gather", "strace", GRAPH },
	{ "diverge", "strace", LEGACY_STREAM },
	{ "gather", "slossless", LEGACY_STREAM },
	{ "gather", "slossless", NONBLOCKING_STREAM },
	{ "gather", "slossless", GRAPH },
	{ "diverge", "slossless", LEGACY_STREAM },
};

START_TEST(trace_mode_every_address_once_in_order)
{
	if (!strcmp(trace_cases[_i].kernel, "diverge"))
		diverge_exact(NULL, 0, trace_cases[_i].ring);
	else
		gather_exact(NULL, 0, trace_cases[_i].ring, trace_cases[_i].how);
}
END_TEST

START_TEST(trace_mode_lossless_barriers)
{
	barrier_rounds_exact("slossless");
}
END_TEST

START_TEST(trace_mode_exact_when_dropping)
{
	gather_dropping(NULL, 0);
}
END_TEST

START_TEST(trace_mode_trap_leaves_no_hole)
{
	trap_no_hole(NULL, 0);
}
END_TEST

/*
 * Lossless, a host ring drained while the kernel runs into its trap: no
 * hole, no hang; what arrives is right and unique.
 */
START_TEST(lossless_trap_leaves_no_hole)
{
	const char *const progs[] = { "hostll_mem", "hostll_exit" };
	const uint32_t threads = 1u << 18;
	struct span_check c = { .kernel = "trap_after", .n = threads - 3,
				.drain = WHILE_RUNNING };

	span_run(progs, 2, "shostll", threads, threads, LEGACY_STREAM, &c);
	ck_assert_uint_eq(c.bad, 0);
	ck_assert_uint_le(c.lanes, c.n);
	span_check_free(&c);
}
END_TEST

/* A case of @s with the fixture and @timeout_s. */
static TCase *add_case(Suite *s, const char *name, int timeout_s)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, timeout_s);
	suite_add_tcase(s, tc);
	return tc;
}

int main(void)
{
	Suite *s;
	TCase *tc;

	tu_require_gpu();
	s = suite_create("span_gpu");
	tc = add_case(s, "span", 300);
	tcase_add_test(tc, every_address_once_in_order_legacy_stream);
	tcase_add_test(tc, every_address_once_in_order_cuda_graph);
	tcase_add_test(tc, spans_never_flushed_are_reclaimed);
	tcase_add_test(tc, divergent_lanes_once_in_order);
	tcase_add_test(tc, exact_when_dropping);
	tcase_add_test(tc, lossless_every_address_legacy_stream);
	tcase_add_test(tc, lossless_every_address_cuda_graph);
	tcase_add_test(tc, lossless_every_address_nonblocking_stream);
	tcase_add_test(tc, lossless_divergent_lanes);
	tcase_add_test(tc, lossless_stopped_consumer_bounded);
	tcase_add_test(add_case(s, "trap", 120), trap_leaves_no_hole);
	tc = add_case(s, "trace", 300);
	tcase_add_loop_test(tc, trace_mode_every_address_once_in_order, 0,
			    (int)(sizeof(trace_cases) / sizeof(trace_cases[0])));
	tcase_add_test(tc, trace_mode_exact_when_dropping);
	tcase_add_test(tc, trace_mode_lossless_barriers);
	tcase_add_test(add_case(s, "trap_trace", 120),
		       trace_mode_trap_leaves_no_hole);
	tcase_add_test(add_case(s, "trap_lossless", 120),
		       lossless_trap_leaves_no_hole);
	/* A CUDA context does not survive fork(): run the tests in-process. */
	return tu_run_suite(s, false);
}
