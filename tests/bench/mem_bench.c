// SPDX-License-Identifier: MIT
/*
 * Memory-probe benchmark (issue 6): device time of vecadd 16M and tiled
 * SGEMM 2048^3 with every global access counted per site (warp-aggregated;
 * examples/mem_trace/mem_count.bpf.c) and traced to the host (one record
 * per warp-level access; mem_trace.bpf.c, a host thread consuming the ring
 * during the runs), with the ring in host memory and in GPU memory
 * (mem_trace_dev.bpf.c), over the original kernels; and two rows with
 * libegpu's per-SM arrays: counting (mem_count_sm.bpf.c) and, as an
 * experiment, records kept in a buffer per SM (mem_trace_sm.bpf.c); and
 * libegpu's compressed warp records (bpf_egpu_trace_warp, per-SM shards of
 * a ring in GPU memory, drained meanwhile: mem_trace_warp.bpf.c, and with
 * reservations batched in spans: mem_trace_batch.bpf.c); the
 * device ring in one shard (EGPU_F_RING_ONE_SHARD: the first rows' ring,
 * mem_trace_one_shard.bpf.c) beside its per-SM shards; and the complete
 * trace on spans (bpf_egpu_trace_span: compact records, one publish per
 * span; mem_trace_span.bpf.c), whose consumer counts every span's
 * records and lane accesses (egpu_span_count, no decoding), for the bytes
 * a lane access costs (B/access: ring bytes over lane accesses); the
 * lossless span trace also with chunks on 8 consumer threads (chunk_fn),
 * the host side at its pace, each run's trace kept in host memory and the
 * last one's decoded and checked address by address after the runs
 * (trace_keep.c: every element of the kernel's arrays accessed as often
 * as the kernel does, nothing else); and the same span rows through the
 * splicer's trace
 * mode (egpu_mem_trace_enable: the records stored at the access, no probe
 * program; the objects' rings only). CUDA events, L2
 * flushed, runs interleaved, medians; a lossless row's probed runs timed
 * on the host's clock until their whole trace is delivered
 * (measure_delivered). For the traces also DRAIN_RUNS more
 * launches, each into an empty ring with no consumer running, then drained
 * on this thread: the kernel's ratio when its whole trace fits, and the
 * time the host takes to drain a run (ms, payload GB/s); for a lossless
 * row, that column has the kernel's own time in the timed runs, waits for
 * room included. Prints a Markdown
 * table (docs/benchmarks.md).
 *
 *   bench_mem [RUNS [PROBE [KERNEL]]]
 *                             the table (default 20 runs; PROBE: only
 *                             that probe's rows, e.g. for ncu; KERNEL:
 *                             only that workload's, vecadd or sgemm_tiled)
 *   bench_mem --plain [RUNS]  the original kernels alone, one "plain" line
 *                             each: scripts/bench_memcheck.sh runs this
 *                             under compute-sanitizer for the comparison
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <egpu/ctx.h>

#include "bench.h"
#include "ring_thread.h"
#include "trace_keep.h"

#define DEFAULT_RUNS 20
#define SETTLE_MS 50      /* the consumer is done when nothing came for this long */
#define SETTLE_MAX_S 30
#define DRAIN_RUNS 5
#define DELIVERY_MAX_MS 10000.0 /* a lossless run's trace not delivered by then: drops */

struct mode {
	const char *name;
	const char *path;
	double vec_target; /* ratio on vecadd, from the issue */
	bool ring;
	bool spans; /* records are spans (bpf_egpu_trace_span): decoded */
	/* A lossless ring: no launch into it without a consumer
	 * (time_drain); each run timed until its trace is delivered
	 * (measure_delivered), its GB/s are those delivered in that time. */
	bool lossless;
	/* Chunks (egpu_ringbuf_opts.chunk_fn) on CHUNK_THREADS consumer
	 * threads, each span of a chunk decoded as on_span does. */
	bool chunks;
	/* The splicer's trace mode into the object's ring "events", its
	 * programs left unattached; its kernels at most @max_registers
	 * registers (0: the untraced kernel's occupancy kept). */
	bool site;
	uint32_t max_registers;
	/* egpu_mem_trace_opts.runtime_max_registers: 0, the runtime
	 * compiled apart with 32 and linked (egpu_ptx_link); -1, one module */
	int32_t runtime_regs;
};

#define CHUNK_THREADS 8

/* What the consumer thread saw; the main thread reads it meanwhile. */
struct stream {
	uint64_t records, bytes;
	uint64_t lanes; /* spans: lane accesses counted */
	bool bad;       /* spans: one was malformed */
	/* A lossless row's timed runs: where each run's trace is kept (set
	 * and reset between runs by the main thread, NULL before) */
	struct trace_keep *keep;
};

/* Launches into an empty ring, drained after each: medians. */
struct drain {
	float kernel_ms; /* the launch */
	float ms;        /* consuming what it left */
	uint64_t bytes;  /* payload bytes per launch */
};

static int on_record(void *user, const void *data, size_t size)
{
	struct stream *s = user;

	(void)data;
	__atomic_store_n(&s->records, s->records + 1, __ATOMIC_RELAXED);
	s->bytes += size;
	return 0;
}

/*
 * A span, kept whole (a lossless row's timed runs) and its records and
 * their lanes counted, not decoded (egpu_span_count); its warp records
 * count as records (drops are counted per warp record too), its bytes
 * with its header.
 */
static int on_span(void *user, const void *data, size_t size)
{
	struct stream *s = user;
	struct trace_keep *keep = __atomic_load_n(&s->keep, __ATOMIC_ACQUIRE);
	uint64_t lanes = 0;
	int n = egpu_span_count(data, size, &lanes);

	if (keep)
		trace_keep_span(keep, data, size);
	s->bad |= n < 0;
	s->lanes += lanes;
	s->records += n > 0 ? (uint64_t)n : 0;
	__atomic_store_n(&s->bytes, s->bytes + size + 8, __ATOMIC_RELAXED);
	return 0;
}

/*
 * A chunk of spans, on CHUNK_THREADS threads at once, kept whole (a
 * lossless row's timed runs) and nothing else: no work per record, which
 * is the consumer's choice (the kept trace is decoded and checked after
 * the runs, and gives the row its records and lanes).
 */
static int on_span_chunk(void *user, const void *data, size_t size)
{
	struct stream *s = user;
	struct trace_keep *keep = __atomic_load_n(&s->keep, __ATOMIC_ACQUIRE);

	if (keep)
		trace_keep_chunk(keep, data, size);
	__atomic_fetch_add(&s->bytes, size, __ATOMIC_RELAXED);
	return 0;
}

/* What the consumer has taken: its bytes go up with every callback. */
static uint64_t delivered(struct stream *s)
{
	return __atomic_load_n(&s->bytes, __ATOMIC_RELAXED);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait until the consumer has taken what the finished kernels sent. */
static void settle(struct stream *s)
{
	uint64_t before;
	int waited = 0;

	CUDA_CHECK(cudaDeviceSynchronize());
	do {
		before = delivered(s);
		sleep_ms(SETTLE_MS);
		waited += SETTLE_MS;
	} while (delivered(s) != before && waited < SETTLE_MAX_S * 1000);
}

/*
 * The mode's probes attached to every kernel, each at its own point, the
 * memory probe to global accesses only (the batched trace's exit probe
 * closes each thread's span); or the trace mode into its ring.
 */
static egpu_obj *load_probe(egpu_ctx *ctx, const struct mode *m)
{
	EGPU_OPTS(egpu_attach_opts, ao, .mem_spaces = 1u << EGPU_SPACE_GLOBAL);
	egpu_obj *obj = egpu_load(ctx, m->path, NULL);
	egpu_prog *prog = NULL;

	EGPU_CHECK(obj);
	if (m->site) { /* global accesses: the default */
		EGPU_OPTS(egpu_mem_trace_opts, to, .max_registers = m->max_registers,
			  .runtime_max_registers = m->runtime_regs);

		EGPU_CHECK(!egpu_mem_trace_enable(ctx, egpu_obj_map(obj, "events"),
						  &to));
		return obj;
	}
	while ((prog = egpu_obj_next_prog(obj, prog))) {
		enum egpu_attach_point point = egpu_prog_attach_point(prog);

		EGPU_CHECK(egpu_attach_kernel(prog, "*", point,
					      point == EGPU_ATTACH_MEM ? &ao :
									 NULL));
	}
	return obj;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static float median(float *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), app_cmp_float);
	return v[n / 2];
}

/*
 * What a probed run of a lossless row waits for: its kernel ended, then a
 * consumer pass that began after that found nothing (ring_thread_mark),
 * so every record it made was delivered.
 */
struct delivery {
	struct ring_thread *rt;
	uint64_t mark;
};

static bool all_delivered(void *arg)
{
	struct delivery *d = arg;

	if (!d->mark) {
		if (cudaStreamQuery(0) != cudaSuccess)
			return false;
		d->mark = ring_thread_mark(d->rt);
	}
	return ring_thread_drained(d->rt, d->mark);
}

/* The arrays @w's kernel accesses (workloads.cu), for trace_keep_check. */
static size_t workload_expect(const struct workload *w, struct trace_expect *ex)
{
	uint64_t arg[3];
	uint64_t n = (uint64_t)*(int *)w->args[3];

	for (int i = 0; i < 3; i++)
		arg[i] = *(uint64_t *)w->args[i];
	if (!strcmp(w->kernel, "vecadd")) {
		ex[0] = (struct trace_expect){ arg[0], n, 4, EGPU_MEM_LOAD, 1 };
		ex[1] = (struct trace_expect){ arg[1], n, 4, EGPU_MEM_LOAD, 1 };
		ex[2] = (struct trace_expect){ arg[2], n, 4, EGPU_MEM_STORE, 1 };
		return 3;
	}
	/* sgemm_tiled: a tile of A and of B per block and step, C once. */
	ex[0] = (struct trace_expect){ arg[0], n * n, 4, EGPU_MEM_LOAD,
				       (uint16_t)(n / BENCH_GEMM_TILE) };
	ex[1] = (struct trace_expect){ arg[1], n * n, 4, EGPU_MEM_LOAD,
				       (uint16_t)(n / BENCH_GEMM_TILE) };
	ex[2] = (struct trace_expect){ arg[2], n * n, 4, EGPU_MEM_STORE, 1 };
	return 3;
}

/*
 * The last run's kept trace against @w's kernel, into @out; its records,
 * lanes and ring bytes as the row's, per launch (into @s, times
 * @launches).
 */
static void check_kept(const struct trace_keep *keep, const struct workload *w,
		       struct stream *s, int launches, char *out, size_t len)
{
	struct trace_expect ex[TRACE_EXPECT_MAX];
	char why[256] = "";
	uint64_t records = 0;
	uint64_t lanes = trace_keep_check(keep, ex, workload_expect(w, ex),
					  &records, why, sizeof(why));

	s->records = records * (uint64_t)launches;
	s->lanes = lanes * (uint64_t)launches;
	s->bytes = keep->used * (uint64_t)launches;
	if (lanes)
		snprintf(out, len, "%llu ok", (unsigned long long)lanes);
	else {
		snprintf(out, len, "BAD");
		fprintf(stderr, "bench_mem: %s: the trace kept is wrong: %s\n",
			w->name, why);
	}
}

/*
 * A lossless row's runs, interleaved with the plain kernel's as
 * bench_measure does (medians into *@base and *@probed): the plain
 * kernel's device time, and each probed run's host time from its launch
 * until the consumer has taken every record it made (all_delivered) and
 * kept it in host memory, so that the time covers the trace's delivery,
 * not only the kernel (whose own device time, producers waiting for room
 * included, goes into *@kernel). A run whose
 * records do not all come (drops) counts as DELIVERY_MAX_MS. The last
 * run's trace is then checked address by address (into @checked).
 */
static void measure_delivered(cudaKernel_t plain, cudaKernel_t inst,
			      const struct workload *w, int runs,
			      struct ring_thread *rt, struct stream *s,
			      float *base, float *probed, float *kernel,
			      char *checked, size_t checked_len)
{
	float *a = calloc((size_t)runs, sizeof(float));
	float *b = calloc((size_t)runs, sizeof(float));
	float *k = calloc((size_t)runs, sizeof(float));
	struct delivery d = { rt, 0 };
	struct trace_keep keep;

	EGPU_CHECK(a && b && k);
	for (int i = 0; i < BENCH_WARMUP; i++) {
		bench_time_once(plain, w);
		bench_time_once(inst, w);
	}
	settle(s);
	/* Twice a warm-up run's bytes: spans vary in size from run to run. */
	EGPU_CHECK(!trace_keep_init(&keep, 2 * s->bytes / BENCH_WARMUP + (64 << 20)));
	__atomic_store_n(&s->keep, &keep, __ATOMIC_RELEASE);
	for (int i = 0; i < runs; i++) {
		a[i] = bench_time_once(plain, w);
		d.mark = 0;
		trace_keep_reset(&keep);
		b[i] = bench_time_until(inst, w, all_delivered, &d,
					DELIVERY_MAX_MS, &k[i]);
		if (b[i] < 0)
			b[i] = (float)DELIVERY_MAX_MS;
	}
	__atomic_store_n(&s->keep, NULL, __ATOMIC_RELEASE);
	check_kept(&keep, w, s, BENCH_WARMUP + runs, checked, checked_len);
	trace_keep_free(&keep);
	*base = median(a, runs);
	*probed = median(b, runs);
	*kernel = median(k, runs);
	free(a);
	free(b);
	free(k);
}

/*
 * DRAIN_RUNS launches of @inst, each with @map's ring empty and nobody
 * consuming it, then the records it left consumed on this thread until
 * none are left: the kernel's time when the ring has room for its trace,
 * and how long the host takes to drain a run (for a ring in GPU memory:
 * copy engine and parsing).
 */
static struct drain time_drain(cudaKernel_t inst, const struct workload *w,
			       egpu_map *map, egpu_sample_fn fn)
{
	struct stream s = { 0 };
	egpu_ringbuf *rb = egpu_ringbuf_new(map, fn, &s);
	float kernel[DRAIN_RUNS], drain[DRAIN_RUNS];
	struct drain d;
	int n;

	EGPU_CHECK(rb);
	for (int i = 0; i < DRAIN_RUNS; i++) {
		double t0;

		kernel[i] = bench_time_once(inst, w);
		CUDA_CHECK(cudaDeviceSynchronize());
		t0 = now_ms();
		while ((n = egpu_ringbuf_consume(rb)) > 0)
			;
		drain[i] = (float)(now_ms() - t0);
		EGPU_CHECK(n == 0);
	}
	d.kernel_ms = median(kernel, DRAIN_RUNS);
	d.ms = median(drain, DRAIN_RUNS);
	d.bytes = s.bytes / DRAIN_RUNS;
	egpu_ringbuf_free(rb);
	return d;
}

static void print_row(const struct workload *w, const struct mode *m, float base,
		      float probed, const struct stream *s, uint64_t drops,
		      int launches, const struct drain *d, const char *checked)
{
	char target[16] = "-", empty[16] = "-", drain_ms[16] = "-",
	     drain_gbs[16] = "-", per_access[16] = "-";
	uint64_t records = s->records;

	if (!strcmp(w->kernel, "vecadd"))
		snprintf(target, sizeof(target), "<= %.1f", m->vec_target);
	if (m->lossless) {
		snprintf(empty, sizeof(empty), "%.2fx", d->kernel_ms / base);
		snprintf(drain_gbs, sizeof(drain_gbs), "%.2f",
			 (double)s->bytes / launches / (probed * 1e6));
	} else if (m->ring) {
		snprintf(empty, sizeof(empty), "%.2fx", d->kernel_ms / base);
		snprintf(drain_ms, sizeof(drain_ms), "%.3f", d->ms);
		snprintf(drain_gbs, sizeof(drain_gbs), "%.2f",
			 d->ms > 0 ? d->bytes / (d->ms * 1e6) : 0.0);
	}
	if (m->spans && s->lanes)
		snprintf(per_access, sizeof(per_access), "%.3f%s",
			 (double)s->bytes / (double)s->lanes, s->bad ? " BAD" : "");
	printf("| %-12s | %-5s | %8.3f | %9.3f | %7.2fx | %-7s | %11.0f | %6.2f%% | %10s | %8s | %10s | %8s | %s |\n",
	       w->name, m->name, base, probed, probed / base, target,
	       (double)(records + drops) / launches,
	       records + drops ? 100.0 * (double)drops / (double)(records + drops) : 0.0,
	       empty, drain_ms, drain_gbs, per_access, checked);
	fflush(stdout);
}

/* @out as egpu_module_load() loads it: a traced module linked with the
 * runtime compiled apart (the mode's runtime_regs), any other as one. */
static cudaLibrary_t load_instrumented(egpu_ctx *ctx, const char *out)
{
	cudaLibrary_t lib;
	void *cubin = NULL;
	size_t size;
	int err = egpu_ptx_link(ctx, out, NULL, &cubin, &size);

	if (err && err != EGPU_ENOENT)
		fprintf(stderr, "bench_mem: loaded as one module: %s\n", egpu_errmsg());
	if (err)
		return app_load_ptx(out);
	CUDA_CHECK(cudaLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
	free(cubin);
	return lib;
}

static void bench_mode(const struct mode *m, const char *ptx, size_t len,
		       const struct workload *w, size_t nw, int runs)
{
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	EGPU_OPTS(egpu_report, rep);
	cudaLibrary_t plain, inst;
	char *out = NULL;
	size_t out_len;
	egpu_map *map, *cursor;
	egpu_sample_fn fn = m->spans ? on_span : on_record;
	egpu_obj *obj;

	EGPU_CHECK(ctx);
	obj = load_probe(ctx, m);
	map = m->ring ? egpu_obj_map(obj, "events") : NULL;
	/* The per-SM buffers' cursors (mem_trace_sm.bpf.c) count records. */
	cursor = m->ring ? NULL : egpu_obj_map(obj, "cursor");
	EGPU_CHECK(!egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, &rep));
	plain = app_load_ptx(ptx);
	inst = load_instrumented(ctx, out);
	for (size_t i = 0; i < nw; i++) {
		cudaKernel_t k = app_kernel(inst, w[i].kernel);
		struct stream s = { 0 };
		struct drain d = { 0 };
		struct ring_thread rt;
		uint64_t drops = 0, kept = 0, kept_before = 0;
		float base, probed;
		uint32_t zero = 0;
		char checked[48] = "-";

		if (m->ring) {
			EGPU_OPTS(egpu_ringbuf_opts, o, .chunk_fn = on_span_chunk,
				  .threads = CHUNK_THREADS);

			ring_thread_start_opts(&rt, map, m->chunks ? NULL : fn, &s,
					       m->chunks ? &o : NULL);
			drops = egpu_ringbuf_drops(rt.rb);
		}
		if (cursor)
			EGPU_CHECK(!egpu_map_lookup(cursor, &zero, &kept_before));
		if (m->lossless)
			measure_delivered(app_kernel(plain, w[i].kernel), k,
					  &w[i], runs, &rt, &s, &base, &probed,
					  &d.kernel_ms,
					  checked, sizeof(checked));
		else
			bench_measure(app_kernel(plain, w[i].kernel), k, &w[i],
				      runs, &base, &probed);
		if (cursor) {
			CUDA_CHECK(cudaDeviceSynchronize());
			EGPU_CHECK(!egpu_map_lookup(cursor, &zero, &kept));
			s.records = kept - kept_before;
		}
		if (m->ring) {
			settle(&s);
			drops = ring_thread_stop(&rt) - drops;
			if (!m->lossless)
				d = time_drain(k, &w[i], map, fn);
		}
		print_row(&w[i], m, base, probed, &s, drops,
			  BENCH_WARMUP + runs, &d, checked);
	}
	cudaLibraryUnload(plain);
	cudaLibraryUnload(inst);
	free(out);
	egpu_ctx_free(ctx);
}

/* The original kernels only, for running under compute-sanitizer. */
static void plain_only(const char *ptx, const struct workload *w, size_t nw, int runs)
{
	cudaLibrary_t lib = app_load_ptx(ptx);

	for (size_t i = 0; i < nw; i++)
		printf("plain\t%s\t%.4f\n", w[i].kernel,
		       bench_median(app_kernel(lib, w[i].kernel), &w[i], runs));
	cudaLibraryUnload(lib);
}

int main(int argc, char **argv)
{
	bool plain = argc > 1 && !strcmp(argv[1], "--plain");
	int runs = argc > 1 + plain ? atoi(argv[1 + plain]) : DEFAULT_RUNS;
	const char *only = !plain && argc > 2 ? argv[2] : NULL;
	const char *kernel = !plain && argc > 3 ? argv[3] : NULL;
	const struct mode modes[] = {
		{ "count", BENCH_DIR "/mem_count.bpf.o", 1.3, false, false, false, false, false, 0, 0 },
		{ "count (SM array)", BENCH_DIR "/mem_count_sm.bpf.o", 1.15, false, false, false, false, false, 0, 0 },
		{ "trace (per-SM buffers, experiment)", BENCH_DIR "/mem_trace_sm.bpf.o", 3.0, false, false, false, false, false, 0, 0 },
		{ "trace", BENCH_DIR "/mem_trace.bpf.o", 2.0, true, false, false, false, false, 0, 0 },
		{ "trace (device ring, one shard)", BENCH_DIR "/mem_trace_one_shard.bpf.o", 2.0, true, false, false, false, false, 0, 0 },
		{ "trace (device ring)", BENCH_DIR "/mem_trace_dev.bpf.o", 2.0, true, false, false, false, false, 0, 0 },
		{ "trace (warp records, per-SM shards)", BENCH_DIR "/mem_trace_warp.bpf.o", 3.0, true, false, false, false, false, 0, 0 },
		{ "trace (warp records, batched)", BENCH_DIR "/mem_trace_batch.bpf.o", 3.0, true, false, false, false, false, 0, 0 },
		{ "trace (spans)", BENCH_DIR "/mem_trace_span_1g.bpf.o", 2.0, true, true, false, false, false, 0, 0 },
		{ "trace (spans, lossless)", BENCH_DIR "/mem_trace_span_lossless.bpf.o", 20.0, true, true, true, false, false, 0, 0 },
		{ "trace (spans, lossless, chunks)", BENCH_DIR "/mem_trace_span_lossless.bpf.o", 20.0, true, true, true, true, false, 0, 0 },
		{ "trace (spans, trace mode)", BENCH_DIR "/mem_trace_span_1g.bpf.o", 2.0, true, true, false, false, true, 0, 0 },
		{ "trace (spans, trace mode, one module)", BENCH_DIR "/mem_trace_span_1g.bpf.o", 2.0, true, true, false, false, true, 0, -1 },
		{ "trace (spans, trace mode, registers uncapped)", BENCH_DIR "/mem_trace_span_1g.bpf.o", 2.0, true, true, false, false, true, EGPU_MAX_REGISTERS_ANY, 0 },
		{ "trace (spans, trace mode, lossless)", BENCH_DIR "/mem_trace_span_lossless.bpf.o", 20.0, true, true, true, false, true, 0, 0 },
		{ "trace (spans, trace mode, lossless, chunks)", BENCH_DIR "/mem_trace_span_lossless.bpf.o", 20.0, true, true, true, true, true, 0, 0 },
	};
	const struct workload *w;
	size_t nw, len;
	char *ptx;

	if (runs < 1) {
		fprintf(stderr, "usage: bench_mem [--plain] [RUNS >= 1]\n");
		return 2;
	}
	app_own_queues();
	nw = bench_start(runs, &w);
	if (!nw)
		return APP_SKIP;
	for (size_t i = 0; kernel && i < nw; i++)
		if (!strcmp(w[i].kernel, kernel)) {
			w += i;
			nw = 1;
			kernel = NULL;
		}
	if (kernel) {
		fprintf(stderr, "bench_mem: no workload runs kernel '%s'\n", kernel);
		return 2;
	}
	ptx = app_read_file(BENCH_DIR "/workloads.ptx", &len);
	if (plain) {
		plain_only(ptx, w, nw, runs);
		free(ptx);
		return 0;
	}
	printf("| workload     | probe | base ms  | probed ms | ratio    | target  | records/run | dropped | kernel     | drain ms | drain GB/s | B/access | lanes checked |\n");
	printf("|--------------|-------|----------|-----------|----------|---------|-------------|---------|------------|----------|------------|----------|---------------|\n");
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!only || !strcmp(only, modes[i].name))
			bench_mode(&modes[i], ptx, len, w, nw, runs);
	free(ptx);
	return 0;
}
