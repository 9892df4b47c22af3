// SPDX-License-Identifier: MIT
/*
 * Event ring benchmark: every thread of a 16M-thread grid emits one record
 * at exit into a ring that the host consumes meanwhile, one row per ring
 * and way of consuming (rows[]): rings in host memory (256 MiB, 16, 64 and
 * 256 payload bytes, a callback per record), and a ring in GPU memory big
 * enough for a whole run (512 MiB, 16 bytes) consumed by a callback per
 * record, in batches, in batches on 4 and on 8 consumer threads, and
 * straight to a file in /tmp on 4 threads. Measured: the kernel's device time with the
 * ring probe over without probes (CUDA events, median), the records and
 * payload bytes the kernel emitted (kept or dropped) per second of its
 * device time, those delivered to the host per second (launch to the last
 * record consumed), and how many the GPU dropped because the ring was
 * full. Every run checks received + dropped == emitted exactly, and a
 * ring that holds a whole run must drop nothing: otherwise FAIL lines
 * follow the table and the program exits 1. For the lossless rows, the
 * consumer's polls and its longest are listed after the table (a poll
 * as long as the producers' one-second wait: the host stood still).
 * Then hash map updates per
 * second from the GPU. Prints Markdown. Host lookup latency: lookup_bench.
 *
 *   ringbuf_bench [RUNS]
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "event_bench.h"

#define THREADS BENCH_THREADS
#define HASH_KEYS (1u << 20)
#define WAIT_S 30 /* for a run's records, before calling them lost */
/* How often the wait for a run's records reads the drop count (a copy
 * out of GPU memory for a device ring, so not at every turn). */
#define DROPS_EVERY_S 1e-3

static int runs = 5;
/* FAIL lines, printed after the table (inside it they would break it). */
static char fails[8192];
/* What the lossless rows' consumers did, printed after the table too. */
static char notes[4096];

enum delivery { PER_RECORD, BATCHES, TO_FILE, CHUNKS };

/* One row of the table: a probe of ringbuf.bpf.c and how it is consumed. */
struct row {
	const char *ring;   /* where its ring is, and its size */
	const char *map;
	const char *prog;
	int bytes;          /* payload of each record */
	enum delivery how;
	uint32_t threads;   /* consumer threads (egpu_ringbuf_opts.threads) */
	bool whole_run;     /* the ring holds a whole run: drops are a failure */
};

static const struct row rows[] = {
	{ "host, 256 MiB", "events", "emit16", 16, PER_RECORD, 1, false },
	{ "host, 256 MiB", "events", "emit64", 64, PER_RECORD, 1, false },
	{ "host, 256 MiB", "events", "emit256", 256, PER_RECORD, 1, false },
	{ "GPU, 512 MiB", "dev_events", "emit16_dev", 16, PER_RECORD, 1, true },
	{ "GPU, 512 MiB", "dev_events", "emit16_dev", 16, BATCHES, 1, true },
	{ "GPU, 512 MiB", "dev_events", "emit16_dev", 16, BATCHES, 4, true },
	{ "GPU, 512 MiB", "dev_events", "emit16_dev", 16, BATCHES, 8, true },
	{ "GPU, 512 MiB", "dev_events", "emit16_dev", 16, TO_FILE, 4, true },
	{ "GPU, 512 MiB", "dev_events", "emit16_dev", 16, CHUNKS, 8, true },
	/* Issue 23's "16 B per thread, lossless, delivered": must drop none. */
	{ "GPU, 64 MiB, lossless", "lossless_events", "emit16_lossless", 16,
	  BATCHES, 8, true },
	{ "GPU, 64 MiB, lossless", "lossless_events", "emit16_lossless", 16,
	  CHUNKS, 8, true },
	{ "GPU, 64 MiB, lossless", "lossless_events", "emit16_lossless", 16,
	  TO_FILE, 8, true },
};

/*
 * The consumer: a host thread polling the ring while kernels run. It
 * counts what poll says it delivered; the callbacks count what they saw
 * (checked equal at the end) and read every record's first word.
 */
struct consumer {
	egpu_ringbuf *rb;
	uint64_t received; /* written by the polling thread only */
	uint64_t seen, sum;
	int err;           /* poll's error, if one */
	bool stop;
	/* The longest poll and how many (polling thread only): a poll of
	 * about a lossless ring's one-second wait means the consumer itself
	 * stood still (a copy that waited for the kernel), not the wait. */
	double longest_s;
	uint64_t polls;
};

/* Called on the polling thread only (rows with one consumer thread). */
static int on_record(void *user, const void *data, size_t size)
{
	struct consumer *c = user;

	(void)size;
	c->seen++;
	c->sum += *(const uint64_t *)data;
	return 0;
}

/* Called on several threads at once with consumer threads. */
static int on_batch(void *user, const struct egpu_record *recs, size_t n)
{
	struct consumer *c = user;
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += *(const uint64_t *)recs[i].data;
	__atomic_fetch_add(&c->seen, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->sum, sum, __ATOMIC_RELAXED);
	return 0;
}

/* Chunks, on several threads at once: each record's first word read. */
static int on_chunk(void *user, const void *data, size_t size)
{
	struct consumer *c = user;
	struct egpu_chunk_iter it = { data, (const uint8_t *)data + size };
	struct egpu_chunk_rec rec;
	uint64_t n = 0, sum = 0;
	int more;

	while ((more = egpu_chunk_next(&it, &rec)) == 1) {
		const uint32_t *batch = rec.data;
		const uint64_t *words = (const uint64_t *)(batch + 2);

		if (!(rec.flags & EGPU_REC_BATCH)) {
			n++;
			sum += *(const uint64_t *)rec.data;
			continue;
		}
		for (uint32_t i = 0; i < batch[0]; i++)
			sum += words[i]; /* word 0 of record i */
		n += batch[0];
	}
	__atomic_fetch_add(&c->seen, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->sum, sum, __ATOMIC_RELAXED);
	return more;
}

static void *consume(void *arg)
{
	struct consumer *c = arg;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		double t0 = bench_now_s();
		int n = egpu_ringbuf_poll(c->rb, 1);
		double took = bench_now_s() - t0;

		c->longest_s = took > c->longest_s ? took : c->longest_s;
		c->polls++;

		if (n < 0) {
			fprintf(stderr, "egpu_ringbuf_poll: %s\n", egpu_errmsg());
			__atomic_store_n(&c->err, n, __ATOMIC_RELEASE);
			break;
		}
		__atomic_store_n(&c->received, c->received + (uint64_t)n,
				 __ATOMIC_RELEASE);
	}
	return NULL;
}

static uint64_t received(struct consumer *c)
{
	return __atomic_load_n(&c->received, __ATOMIC_ACQUIRE);
}

/* Append a line to @buf of @len bytes. */
__attribute__((format(printf, 3, 4)))
static void add_line(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

#define fail_line(...) add_line(fails, sizeof(fails), __VA_ARGS__)

static const char *delivery_name(const struct row *w, char *buf, size_t n)
{
	static const char *const how[] = { "callback per record", "batches",
					   "file in /tmp", "chunks" };

	if (w->threads > 1)
		snprintf(buf, n, "%s, %u threads", how[w->how], w->threads);
	else
		snprintf(buf, n, "%s", how[w->how]);
	return buf;
}

/* What was received, dropped or written, against what it must be. */
static void fail(const struct row *w, const char *what, uint64_t got,
		 uint64_t want)
{
	char how[64];

	fail_line("**FAIL** (%s ring, %s, %d B): %s: %llu, expected %llu\n",
		  w->ring, delivery_name(w, how, sizeof(how)), w->bytes, what,
		  (unsigned long long)got, (unsigned long long)want);
}

/*
 * Wait until the consumer received or the GPU dropped a run's records
 * (@base: received + dropped before it, launched at @t0): seconds from
 * launch to then. *@drops: the drop count then.
 */
static double wait_for_run(const struct row *w, struct consumer *c,
			   uint64_t base, double t0, uint64_t *drops)
{
	double read_at = 0, now;
	struct timespec nap = { .tv_nsec = 10000 };

	for (;;) {
		uint64_t got = received(c);

		now = bench_now_s();
		if (got + *drops - base >= THREADS || now - read_at > DROPS_EVERY_S) {
			*drops = egpu_ringbuf_drops(c->rb);
			read_at = now;
		}
		if (got + *drops - base >= THREADS) {
			if (got + *drops - base > THREADS)
				fail(w, "received + dropped in a run", got + *drops - base,
				     THREADS);
			return now - t0;
		}
		if (now - t0 > WAIT_S || __atomic_load_n(&c->err, __ATOMIC_ACQUIRE)) {
			fail(w, "records accounted for after the wait (or a poll error)",
			     got + *drops - base, THREADS);
			return now - t0;
		}
		nanosleep(&nap, NULL);
	}
}

static egpu_ringbuf *consumer_new(const struct row *w, egpu_obj *obj,
				  struct consumer *c, const char *path)
{
	EGPU_OPTS(egpu_ringbuf_opts, o, .threads = w->threads,
		  .batch_fn = w->how == BATCHES ? on_batch : NULL,
		  .chunk_fn = w->how == CHUNKS ? on_chunk : NULL,
		  .path = w->how == TO_FILE ? path : NULL);
	return egpu_ringbuf_new_opts(egpu_obj_map(obj, w->map),
				     w->how == PER_RECORD ? on_record : NULL,
				     c, &o);
}

/* A record of the file, counted (egpu_record_file_read's callback). */
static int count_file_record(void *user, const void *data, size_t size)
{
	(void)data, (void)size;
	++*(uint64_t *)user;
	return 0;
}

/* The file read back by the library holds @want records. */
static void fail_unless_in_file(const struct row *w, const char *path,
				uint64_t want)
{
	uint64_t n = 0;
	long got = egpu_record_file_read(path, count_file_record, &n);

	if (got < 0 || (uint64_t)got != want)
		fail(w, "records read back from the file", got < 0 ? 0 : n, want);
}

/*
 * After the last run and a last consume: every record emitted was
 * received or dropped, none twice; the callbacks saw each one, or the
 * file holds each one.
 */
static void check_totals(const struct row *w, const struct consumer *c,
			 uint64_t drops, const char *path)
{
	uint64_t sent = (uint64_t)runs * THREADS;

	if (c->received + drops != sent)
		fail(w, "received + dropped over all runs", c->received + drops,
		     sent);
	if (w->whole_run && drops)
		fail(w, "records dropped by a ring that holds a whole run",
		     drops, 0);
	if (w->how != TO_FILE && c->seen != c->received)
		fail(w, "records the callbacks saw", c->seen, c->received);
	if (w->how == TO_FILE)
		fail_unless_in_file(w, path, c->received);
}

/* The medians of the runs' kernel times @kms and delivery rates @rate. */
static void print_row(const struct row *w, double *kms, double *rate,
		      uint64_t drops, double plain_ms)
{
	char how[64];
	uint64_t sent = (uint64_t)runs * THREADS;
	double k = bench_percentile(kms, runs, 50);
	double rps = bench_percentile(rate, runs, 50), eps = THREADS / (k / 1e3);

	printf("| %s | %s | %3d B | %llu (%.2f%%) | %.3f | %.3f | %.1fx | %.1f M | %.2f | %.1f M | %.2f |\n",
	       w->ring, delivery_name(w, how, sizeof(how)), w->bytes,
	       (unsigned long long)drops, 100.0 * (double)drops / (double)sent,
	       plain_ms, k, k / plain_ms, eps / 1e6, eps * w->bytes / 1e9,
	       rps / 1e6, rps * w->bytes / 1e9);
}

static void bench_ring(const struct row *w, const char *ptx, size_t len,
		       float *x, double plain_ms)
{
	char path[64], how[64];
	struct bench_probe s;
	struct consumer c = { 0 };
	double *kms = calloc((size_t)runs, sizeof(double));
	double *rate = calloc((size_t)runs, sizeof(double));
	uint64_t drops = 0;
	pthread_t t;
	int last;

	snprintf(path, sizeof(path), "/tmp/ringbuf_bench.%d.bin", (int)getpid());
	bench_probe_load(&s, ptx, len, w->prog);
	c.rb = consumer_new(w, s.obj, &c, path);
	EGPU_CHECK(c.rb);
	pthread_create(&t, NULL, consume, &c);
	for (int r = 0; r < runs; r++) {
		uint64_t before = drops, base = received(&c) + drops;
		double t0 = bench_now_s(), took;

		kms[r] = bench_touch(s.k, x);
		took = wait_for_run(w, &c, base, t0, &drops);
		rate[r] = (THREADS - (drops - before)) / took;
	}
	__atomic_store_n(&c.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	/* Whatever comes now was delivered twice, or counted as dropped. */
	last = egpu_ringbuf_consume(c.rb);
	if (last < 0)
		fail_line("**FAIL** (%s ring, %s, %d B): egpu_ringbuf_consume: %s\n",
			  w->ring, delivery_name(w, how, sizeof(how)), w->bytes,
			  egpu_errmsg());
	c.received += last > 0 ? (uint64_t)last : 0;
	drops = egpu_ringbuf_drops(c.rb);
	egpu_ringbuf_free(c.rb); /* closes the file */
	check_totals(w, &c, drops, path);
	print_row(w, kms, rate, drops, plain_ms);
	if (strstr(w->ring, "lossless"))
		add_line(notes, sizeof(notes),
			 "- %s ring, %s: %llu polls, the longest %.1f ms\n", w->ring,
			 delivery_name(w, how, sizeof(how)),
			 (unsigned long long)c.polls, c.longest_s * 1e3);
	if (w->how == TO_FILE)
		unlink(path);
	bench_probe_free(&s);
	free(kms);
	free(rate);
}

static void bench_maps(const char *ptx, size_t len, float *x, double plain_ms)
{
	double *kms = calloc((size_t)runs, sizeof(double)), k;
	struct bench_probe s;

	bench_probe_load(&s, ptx, len, "hash_update");
	for (int r = 0; r < runs; r++)
		kms[r] = bench_touch(s.k, x);
	k = bench_percentile(kms, runs, 50);
	printf("\n| measure | value |\n|---|---|\n");
	printf("| hash updates from the GPU (%u threads, %u keys) | %.1f M/s (kernel %.3f ms, %.3f ms without probe) |\n",
	       THREADS, HASH_KEYS, THREADS / (k / 1e3) / 1e6, k, plain_ms);
	bench_probe_free(&s);
	free(kms);
}

int main(int argc, char **argv)
{
	struct cudaDeviceProp prop;
	cudaLibrary_t plain_lib;
	cudaKernel_t plain;
	double *pms, plain_ms;
	const char *why;
	size_t len;
	char *ptx;
	float *x;

	if (argc > 1 && atoi(argv[1]) > 0)
		runs = atoi(argv[1]);
	app_own_queues();
	if (!app_gpu_present(&why)) {
		printf("no GPU (%s): nothing to measure\n", why);
		return APP_SKIP;
	}
	CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
	CUDA_CHECK(cudaMalloc((void **)&x, THREADS * sizeof(float)));
	CUDA_CHECK(cudaMemset(x, 0, THREADS * sizeof(float)));
	ptx = app_read_file(BENCH_DIR "/ringbuf_kernels.ptx", &len);
	plain_lib = app_load_ptx(ptx);
	plain = app_kernel(plain_lib, "touch");
	pms = calloc((size_t)runs, sizeof(double));
	bench_touch(plain, x); /* warm-up */
	for (int r = 0; r < runs; r++)
		pms[r] = bench_touch(plain, x);
	plain_ms = bench_percentile(pms, runs, 50);

	printf("GPU: %s, libegpu %s, %u threads each emitting one record at exit,\n"
	       "the ring consumed by the host meanwhile, median of %d runs; dropped: over all runs\n\n",
	       prop.name, egpu_version(), THREADS, runs);
	printf("| ring | delivery | payload | dropped | kernel ms, no probe | kernel ms, ring | slowdown | emitted rec/s | GB/s | delivered rec/s | GB/s |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		bench_ring(&rows[i], ptx, len, x, plain_ms);
	bench_maps(ptx, len, x, plain_ms);
	cudaLibraryUnload(plain_lib);
	cudaFree(x);
	free(pms);
	free(ptx);
	if (notes[0])
		printf("\nConsumers of the lossless rows:\n\n%s", notes);
	if (fails[0])
		printf("\n%s", fails);
	return fails[0] ? 1 : 0;
}
