// SPDX-License-Identifier: MIT
/*
 * launchlate: how long from the host calling cudaLaunchKernel to the first
 * thread of the kernel running. The host notes CLOCK_MONOTONIC just before
 * each launch; an entry probe sends the GPU's %globaltimer when the first
 * thread of each block enters; the context's clock calibration (egpu_clock)
 * puts the earliest block of each launch on the host's clock.
 *
 * Three runs of LAUNCHES launches of `tick`: each after the previous kernel
 * finished (the GPU idle: pure launch latency), back to back without
 * waiting (launches queue behind running kernels), and again one at a time
 * with CUPTI recording, to compare with CUPTI's own launch (API entry) and
 * kernel start timestamps.
 *
 *   launchlate [--check] [PROBE.bpf.o KERNELS.ptx]
 *
 * --check: every launch measured (one record per block, none dropped),
 * every latency in (0, 1 s), the calibration's error bound below 10 us,
 * and where CUPTI can be had, every launch seen by CUPTI and our median
 * within 10 us plus the error bound of CUPTI's (ours starts earlier, before
 * the launch call, and ends later, when a block runs: see the README).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "xcheck.h"

#define GRID 8
#define BLOCK 128
#define WORK 2000 /* rounds of arithmetic per thread: a few microseconds */
#define LAUNCHES 1000
#define WARMUP 50
#define LATENCY_MAX_NS 1000000000ll
#define CLOCK_ERROR_MAX_NS 10000u
#define XCHECK_TOLERANCE_NS 10000ll
#define NOT_MEASURED INT64_MIN
#define HIST_ROWS 24
#define HIST_BAR 40

struct entry_event {
	uint64_t ns; /* %globaltimer when the block's first thread entered */
	uint32_t block;
	uint32_t smid;
};

/* The probe's records of one run, in the order the GPU wrote them. */
struct entries {
	struct entry_event v[LAUNCHES * GRID];
	size_t n;
	uint64_t extra, malformed;
};

/* One run of LAUNCHES launches. */
struct run {
	const char *name;
	bool sync_each;              /* wait for each kernel before the next */
	struct egpu_clock clk;       /* the calibration used */
	uint64_t launch_ns[LAUNCHES]; /* CLOCK_MONOTONIC before the launch call */
	uint64_t call_ns[LAUNCHES];  /* time spent in cudaLaunchKernel */
	uint64_t entry_ns[LAUNCHES]; /* first entry, on CLOCK_MONOTONIC */
	int64_t latency_ns[LAUNCHES]; /* entry - launch, or NOT_MEASURED */
	size_t measured;
	uint64_t drops;              /* records the probe dropped in this run */
};

struct bench {
	struct app *app;
	egpu_ringbuf *rb;
	cudaKernel_t tick;
	cudaStream_t stream;
	float *x;
	struct entries ent;
};

/* Distribution of a set of nanosecond values. */
struct dist {
	size_t n;
	int64_t min, p50, p90, p99, max;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int on_entry(void *user, const void *data, size_t size)
{
	struct entries *e = user;

	if (size != sizeof(struct entry_event))
		e->malformed++;
	else if (e->n == LAUNCHES * GRID)
		e->extra++;
	else
		memcpy(&e->v[e->n++], data, sizeof(struct entry_event));
	return 0;
}

static void launch(struct bench *b)
{
	int work = WORK;
	void *args[] = { &b->x, &work };

	CUDA_CHECK(cudaLaunchKernel((const void *)b->tick, (dim3){ GRID, 1, 1 },
				    (dim3){ BLOCK, 1, 1 }, args, 0, b->stream));
}

/* Every record the probes sent is in the ring once the kernels are done. */
static void drain(struct bench *b)
{
	int n;

	CUDA_CHECK(cudaStreamSynchronize(b->stream));
	while ((n = egpu_ringbuf_poll(b->rb, 10)) > 0)
		;
	EGPU_CHECK(n == 0);
}

/* The earliest entry of one launch's GRID records, each block once. */
static bool first_entry(const struct entry_event *ev, uint64_t *ns)
{
	bool seen[GRID] = { false };

	*ns = UINT64_MAX;
	for (int i = 0; i < GRID; i++) {
		if (ev[i].block >= GRID || seen[ev[i].block])
			return false;
		seen[ev[i].block] = true;
		if (ev[i].ns < *ns)
			*ns = ev[i].ns;
	}
	return true;
}

/*
 * Launches on one stream run one after another, so the records come in
 * launch order, GRID per launch; a run with records missing or dropped
 * measures nothing.
 */
static void match_entries(struct bench *b, struct run *r)
{
	uint64_t gpu_ns;

	for (size_t i = 0; i < LAUNCHES; i++) {
		r->latency_ns[i] = NOT_MEASURED;
		if (b->ent.n != LAUNCHES * GRID || b->ent.extra || b->ent.malformed ||
		    !first_entry(&b->ent.v[i * GRID], &gpu_ns))
			continue;
		r->entry_ns[i] = egpu_clock_gpu_to_host(&r->clk, gpu_ns);
		r->latency_ns[i] = (int64_t)(r->entry_ns[i] - r->launch_ns[i]);
		r->measured++;
	}
}

static void run_launches(struct bench *b, struct run *r, struct xcheck *x)
{
	uint64_t drops = egpu_ringbuf_drops(b->rb);

	b->ent.n = b->ent.extra = b->ent.malformed = 0;
	r->clk.sz = sizeof(r->clk);
	EGPU_CHECK(!egpu_clock_sync(b->app->ctx, &r->clk));
	for (size_t i = 0; i < LAUNCHES; i++) {
		if (x)
			xcheck_expect(x, i);
		r->launch_ns[i] = now_ns();
		launch(b);
		r->call_ns[i] = now_ns() - r->launch_ns[i];
		if (r->sync_each)
			CUDA_CHECK(cudaStreamSynchronize(b->stream));
	}
	drain(b);
	r->drops = egpu_ringbuf_drops(b->rb) - drops;
	match_entries(b, r);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The measured values of @v, sorted into @sorted; their distribution. */
static struct dist distribution(const int64_t *v, size_t n, int64_t *sorted)
{
	struct dist d = { 0 };

	for (size_t i = 0; i < n; i++)
		if (v[i] != NOT_MEASURED)
			sorted[d.n++] = v[i];
	if (!d.n)
		return d;
	qsort(sorted, d.n, sizeof(*sorted), cmp_i64);
	d.min = sorted[0];
	d.p50 = sorted[(d.n - 1) / 2];
	d.p90 = sorted[(d.n - 1) * 90 / 100];
	d.p99 = sorted[(d.n - 1) * 99 / 100];
	d.max = sorted[d.n - 1];
	return d;
}

static void print_dist(const char *what, const struct dist *d)
{
	printf("  %-34s median %8.2f  p90 %8.2f  p99 %8.2f  min %8.2f  max %8.2f us\n",
	       what, d->p50 / 1e3, d->p90 / 1e3, d->p99 / 1e3, d->min / 1e3,
	       d->max / 1e3);
}

/* Bucket widths of 0.1, 0.2, 0.5, 1, 2, 5 ... microseconds. */
static int64_t wider(int64_t w)
{
	int64_t lead = w;

	while (lead >= 10)
		lead /= 10;
	return lead == 2 ? w / 2 * 5 : w * 2;
}

/* Linear buckets from the minimum to p99, as few as fit HIST_ROWS; the
 * values past p99 in one more. */
static void print_hist(const int64_t *sorted, const struct dist *d)
{
	size_t count[HIST_ROWS] = { 0 }, top = 1;
	int64_t w = 100, base;
	int rows;
	char bar[HIST_BAR + 1];

	while ((d->p99 - d->min) / w >= HIST_ROWS - 1)
		w = wider(w);
	base = d->min / w * w;
	if (base > d->min) /* division rounds negative values up */
		base -= w;
	rows = (int)((d->p99 - base) / w) + 1 + (d->max > d->p99);
	rows = rows > HIST_ROWS ? HIST_ROWS : rows;
	for (size_t i = 0; i < d->n; i++) {
		int64_t row = (sorted[i] - base) / w;

		count[row < rows - 1 ? row : rows - 1]++;
	}
	for (int i = 0; i < rows; i++)
		top = count[i] > top ? count[i] : top;
	for (int i = 0; i < rows; i++) {
		size_t len = count[i] * HIST_BAR / top;

		memset(bar, '@', len);
		memset(bar + len, ' ', HIST_BAR - len);
		bar[HIST_BAR] = '\0';
		if (i == rows - 1 && d->max > d->p99)
			printf("  [%8.1f,      ...) %6zu |%s|\n",
			       (base + i * w) / 1e3, count[i], bar);
		else
			printf("  [%8.1f, %8.1f) %6zu |%s|\n", (base + i * w) / 1e3,
			       (base + (i + 1) * w) / 1e3, count[i], bar);
	}
}

static void report_run(const struct run *r)
{
	static int64_t sorted[LAUNCHES], call[LAUNCHES];
	struct dist lat, api;

	for (size_t i = 0; i < LAUNCHES; i++)
		call[i] = (int64_t)r->call_ns[i];
	lat = distribution(r->latency_ns, LAUNCHES, sorted);
	printf("\n%s: %zu of %d launches measured (clock error bound +-%.2f us)\n",
	       r->name, r->measured, LAUNCHES, r->clk.error_ns / 1e3);
	if (!lat.n)
		return;
	print_hist(sorted, &lat);
	print_dist("launch -> first thread entered:", &lat);
	api = distribution(call, LAUNCHES, sorted);
	print_dist("time in cudaLaunchKernel:", &api);
}

/* Per launch, from CUPTI: API entry to kernel start, and where our entry
 * lies after CUPTI's kernel start, both clocks on CLOCK_MONOTONIC. */
struct compared {
	int64_t cupti[LAUNCHES], diff[LAUNCHES], after_start[LAUNCHES];
	size_t seen; /* launches CUPTI reported, callback and kernel */
};

static void compare(const struct run *r, const struct xcheck *x,
		    struct compared *c)
{
	c->seen = 0;
	for (size_t i = 0; i < LAUNCHES; i++) {
		const struct xcheck_launch *l = &x->launch[i];

		c->cupti[i] = c->diff[i] = c->after_start[i] = NOT_MEASURED;
		if (!l->start_ns)
			continue;
		c->seen++;
		c->cupti[i] = (int64_t)(l->start_ns - l->api_ns);
		if (r->latency_ns[i] == NOT_MEASURED)
			continue;
		c->diff[i] = llabs(r->latency_ns[i] - c->cupti[i]);
		c->after_start[i] = (int64_t)(r->entry_ns[i] -
					      (l->start_ns - (uint64_t)x->mono_offset_ns));
	}
}

static int report_xcheck(const struct run *r, const struct xcheck *x, bool check)
{
	static struct compared c;
	static int64_t sorted[LAUNCHES];
	struct dist ours, cupti, diff, after;
	int64_t tolerance = XCHECK_TOLERANCE_NS + (int64_t)r->clk.error_ns;

	compare(r, x, &c);
	ours = distribution(r->latency_ns, LAUNCHES, sorted);
	cupti = distribution(c.cupti, LAUNCHES, sorted);
	diff = distribution(c.diff, LAUNCHES, sorted);
	after = distribution(c.after_start, LAUNCHES, sorted);
	printf("\nCUPTI cross-check: %zu of %d launches seen by CUPTI, %llu records dropped\n",
	       c.seen, LAUNCHES, (unsigned long long)x->dropped);
	if (!cupti.n || !diff.n) {
		if (check)
			fprintf(stderr, "CHECK FAILED: no launch both measured and seen by CUPTI\n");
		return check;
	}
	print_dist("CUPTI: API entry -> kernel start:", &cupti);
	print_dist("ours: launch -> first thread:", &ours);
	print_dist("per launch |ours - CUPTI|:", &diff);
	print_dist("our entry - CUPTI kernel start:", &after);
	printf("  (CUPTI's clock on CLOCK_MONOTONIC +-%.2f us, ours +-%.2f us)\n",
	       x->mono_error_ns / 1e3, r->clk.error_ns / 1e3);
	if (!check)
		return 0;
	if (c.seen == LAUNCHES && llabs(ours.p50 - cupti.p50) <= tolerance)
		return 0;
	fprintf(stderr, "CHECK FAILED: CUPTI saw %zu of %d launches; medians %.2f (ours) and %.2f us (CUPTI) differ by more than %.2f us\n",
		c.seen, LAUNCHES, ours.p50 / 1e3, cupti.p50 / 1e3, tolerance / 1e3);
	return 1;
}

static int check_run(const struct run *r, const struct entries *e)
{
	int bad = 0;

	if (r->measured != LAUNCHES || r->drops) {
		fprintf(stderr, "CHECK FAILED: %s: %zu of %d launches measured (%zu records for %d, %llu extra, %llu malformed, %llu dropped)\n",
			r->name, r->measured, LAUNCHES, e->n, LAUNCHES * GRID,
			(unsigned long long)e->extra,
			(unsigned long long)e->malformed,
			(unsigned long long)r->drops);
		bad = 1;
	}
	for (size_t i = 0; i < LAUNCHES; i++) {
		if (r->latency_ns[i] == NOT_MEASURED ||
		    (r->latency_ns[i] > 0 && r->latency_ns[i] < LATENCY_MAX_NS))
			continue;
		fprintf(stderr, "CHECK FAILED: %s: launch %zu latency %lld ns\n",
			r->name, i, (long long)r->latency_ns[i]);
		bad = 1;
	}
	if (r->clk.error_ns >= CLOCK_ERROR_MAX_NS) {
		fprintf(stderr, "CHECK FAILED: clock error bound %llu ns\n",
			(unsigned long long)r->clk.error_ns);
		bad = 1;
	}
	return bad;
}

static void print_clock(const char *what, const struct egpu_clock *c)
{
	printf("%s: globaltimer - CLOCK_MONOTONIC = %lld ns +-%llu ns (round trip %llu ns, timer step %llu ns, best of %u rounds)\n",
	       what, (long long)c->offset_ns, (unsigned long long)c->error_ns,
	       (unsigned long long)c->round_trip_ns, (unsigned long long)c->step_ns,
	       c->rounds);
}

/* How far the clocks drifted apart between two calibrations. */
static void print_drift(const struct egpu_clock *a, const struct egpu_clock *b)
{
	double ms = (b->host_ns - a->host_ns) / 1e6;
	int64_t moved = b->offset_ns - a->offset_ns;

	/* ns per ms is 1e-6 of it: ppm. */
	printf("\nclock drift: offset moved %lld ns in %.1f ms (%.2f ppm; each bound +-%.2f us)\n",
	       (long long)moved, ms, moved / ms, b->error_ns / 1e3);
}

static void bench_start(struct bench *b, struct app *app)
{
	b->app = app;
	b->rb = egpu_ringbuf_new(egpu_obj_map(app->obj, "entries"), on_entry, &b->ent);
	EGPU_CHECK(b->rb);
	b->tick = app_kernel(app_load_ptx(app->instrumented), "tick");
	CUDA_CHECK(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking));
	CUDA_CHECK(cudaMalloc((void **)&b->x, GRID * BLOCK * sizeof(float)));
	CUDA_CHECK(cudaMemset(b->x, 0, GRID * BLOCK * sizeof(float)));
	for (int i = 0; i < WARMUP; i++) {
		launch(b);
		CUDA_CHECK(cudaStreamSynchronize(b->stream));
	}
	drain(b);
}

static void bench_stop(struct bench *b)
{
	egpu_ringbuf_free(b->rb);
	cudaStreamDestroy(b->stream);
	cudaFree(b->x);
}

/* The run with CUPTI recording, if CUPTI can be had. */
static int run_with_cupti(struct bench *b, struct run *r, bool check)
{
	struct xcheck x;
	const char *why;
	int bad = 0;

	if (!xcheck_start(&x, LAUNCHES, &why)) {
		printf("\nCUPTI cross-check skipped: %s\n", why);
		xcheck_free(&x);
		return 0;
	}
	run_launches(b, r, &x);
	print_clock("\ncalibration with CUPTI on", &r->clk);
	report_run(r);
	if (check)
		bad |= check_run(r, &b->ent);
	if (xcheck_stop(&x, &why)) {
		bad |= report_xcheck(r, &x, check);
	} else {
		fprintf(stderr, "%s%s\n", check ? "CHECK FAILED: " : "", why);
		bad |= check;
	}
	xcheck_free(&x);
	return bad;
}

static int run(struct app *app, bool check)
{
	static struct bench b;
	static struct run idle = { .name = "one at a time (GPU idle)", .sync_each = true };
	static struct run queued = { .name = "back to back (queued)" };
	static struct run traced = { .name = "one at a time, CUPTI on", .sync_each = true };
	EGPU_OPTS(egpu_clock, start);
	EGPU_OPTS(egpu_clock, end);
	int bad = 0;

	EGPU_CHECK(!egpu_clock_get(app->ctx, &start));
	print_clock("\ncalibration at the context's first GPU use", &start);
	bench_start(&b, app);
	printf("%d launches of tick<<<%d, %d>>> per run, after %d to warm up\n",
	       LAUNCHES, GRID, BLOCK, WARMUP);
	run_launches(&b, &idle, NULL);
	report_run(&idle);
	if (check)
		bad |= check_run(&idle, &b.ent);
	run_launches(&b, &queued, NULL);
	report_run(&queued);
	if (check)
		bad |= check_run(&queued, &b.ent);
	bad |= run_with_cupti(&b, &traced, check);
	EGPU_CHECK(!egpu_clock_sync(app->ctx, &end));
	print_drift(&start, &end);
	bench_stop(&b);
	if (check && !bad)
		printf("check passed\n");
	return bad;
}

int main(int argc, char **argv)
{
	return app_main(argc, argv, EXAMPLE_PROBE, EXAMPLE_PTX, run);
}
