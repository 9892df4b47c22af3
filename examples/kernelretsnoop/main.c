// SPDX-License-Identifier: MIT
/*
 * kernelretsnoop: every thread of `straggle` reports when it left the
 * kernel through a ring buffer; per warp, the host measures the spread
 * between its first and last thread to leave and names the warps whose
 * slowest thread lags the fastest by more than a threshold. A second run
 * into a 4 KiB ring shows drops being counted, never blocking the GPU.
 *
 *   kernelretsnoop [--check] [PROBE.bpf.o KERNELS.ptx]
 *
 * --check: one record per thread and none lost in the first run; in the
 * second, records received + drops counted = threads, exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

#define GRID 512
#define BLOCK 128
#define THREADS (GRID * BLOCK)
#define WARPS (THREADS / 32)
#define ROUNDS 2000
#define LAG_NS 5000 /* warps whose threads leave further apart are named */

struct exit_event {
	uint32_t thread[3];
	uint32_t block[3];
	uint64_t ns;
};

/* What one run's records said. */
struct run {
	uint64_t records, dup, bad;
	uint8_t seen[THREADS];
	uint64_t first[WARPS], last[WARPS]; /* exit times, 0: none yet */
	uint8_t fast[WARPS], slow[WARPS];   /* lanes that left first, last */
};

static int on_event(void *user, const void *data, size_t size)
{
	struct run *r = user;
	const struct exit_event *e = data;
	uint32_t t, w;

	r->records++;
	if (size != sizeof(*e) || e->block[0] >= GRID || e->thread[0] >= BLOCK ||
	    e->block[1] || e->block[2] || e->thread[1] || e->thread[2]) {
		r->bad++;
		return 0;
	}
	t = e->block[0] * BLOCK + e->thread[0];
	w = t / 32;
	if (r->seen[t]++)
		r->dup++;
	if (!r->first[w] || e->ns < r->first[w]) {
		r->first[w] = e->ns;
		r->fast[w] = t % 32;
	}
	if (e->ns >= r->last[w]) {
		r->last[w] = e->ns;
		r->slow[w] = t % 32;
	}
	return 0;
}

static void launch(cudaKernel_t k, float *x)
{
	int rounds = ROUNDS;
	void *args[] = { &x, &rounds };

	CUDA_CHECK(cudaLaunchKernel((const void *)k, (dim3){ GRID, 1, 1 },
				    (dim3){ BLOCK, 1, 1 }, args, 0, 0));
	CUDA_CHECK(cudaDeviceSynchronize());
}

/* Everything the probes sent is in the ring once the kernel is done. */
static void drain(egpu_ringbuf *rb)
{
	int n;

	while ((n = egpu_ringbuf_poll(rb, 10)) > 0)
		;
	EGPU_CHECK(n == 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report_spreads(const struct run *r)
{
	static uint64_t spread[WARPS];
	uint32_t n = 0, lagging = 0;

	for (uint32_t w = 0; w < WARPS; w++)
		if (r->first[w])
			spread[n++] = r->last[w] - r->first[w];
	if (!n)
		return;
	for (uint32_t w = 0; w < WARPS; w++) {
		uint64_t lag = r->last[w] - r->first[w];

		if (!r->first[w] || lag <= LAG_NS)
			continue;
		if (lagging++ < 8)
			printf("  block %u warp %u: lane %u left %.2f us after lane %u\n",
			       w * 32 / BLOCK, w % (BLOCK / 32), r->slow[w],
			       lag / 1e3, r->fast[w]);
	}
	qsort(spread, n, sizeof(spread[0]), cmp_u64);
	printf("%u warps lag by more than %.1f us (median spread %.2f us, max %.2f us)\n",
	       lagging, LAG_NS / 1e3, spread[n / 2] / 1e3, spread[n - 1] / 1e3);
}

static int check_full(const struct run *r, uint64_t drops)
{
	if (r->records == THREADS && !r->dup && !r->bad && !drops)
		return 0;
	fprintf(stderr, "CHECK FAILED: %llu records for %u threads, %llu duplicates, %llu malformed, %llu dropped\n",
		(unsigned long long)r->records, THREADS, (unsigned long long)r->dup,
		(unsigned long long)r->bad, (unsigned long long)drops);
	return 1;
}

static int check_small(const struct run *r, uint64_t drops)
{
	if (r->records + drops == THREADS && r->records && !r->dup && !r->bad)
		return 0;
	fprintf(stderr, "CHECK FAILED: small ring: %llu records + %llu drops != %u threads\n",
		(unsigned long long)r->records, (unsigned long long)drops, THREADS);
	return 1;
}

static int run(struct app *app, bool check)
{
	static struct run full, small;
	egpu_ringbuf *rb_full, *rb_small;
	uint32_t zero = 0, one = 1;
	cudaKernel_t k;
	float *x;
	int bad = 0;

	rb_full = egpu_ringbuf_new(egpu_obj_map(app->obj, "events"), on_event, &full);
	rb_small = egpu_ringbuf_new(egpu_obj_map(app->obj, "events_small"), on_event,
				    &small);
	EGPU_CHECK(rb_full && rb_small);
	k = app_kernel(app_load_ptx(app->instrumented), "straggle");
	CUDA_CHECK(cudaMalloc((void **)&x, THREADS * sizeof(float)));
	CUDA_CHECK(cudaMemset(x, 0, THREADS * sizeof(float)));

	launch(k, x);
	drain(rb_full);
	printf("\nstraggle<<<%u, %u>>>: %llu exit records, %llu dropped\n", GRID,
	       BLOCK, (unsigned long long)full.records,
	       (unsigned long long)egpu_ringbuf_drops(rb_full));
	report_spreads(&full);
	if (check)
		bad |= check_full(&full, egpu_ringbuf_drops(rb_full));

	/* Again into the 4 KiB ring: it fills, the GPU drops and counts. */
	EGPU_CHECK(!egpu_map_update(egpu_obj_map(app->obj, "config"), &zero, &one, 0));
	launch(k, x);
	drain(rb_small);
	printf("\nwith a 4 KiB ring: %llu records received, %llu dropped (%u threads)\n",
	       (unsigned long long)small.records,
	       (unsigned long long)egpu_ringbuf_drops(rb_small), THREADS);
	if (check)
		bad |= check_small(&small, egpu_ringbuf_drops(rb_small));

	egpu_ringbuf_free(rb_full);
	egpu_ringbuf_free(rb_small);
	cudaFree(x);
	return bad;
}

/* run(), and a last line saying the checks held. */
static int run_and_say(struct app *app, bool check)
{
	int rc = run(app, check);

	if (!rc && check)
		printf("check passed\n");
	return rc;
}

int main(int argc, char **argv)
{
	return app_main(argc, argv, EXAMPLE_PROBE, EXAMPLE_PTX, run_and_say);
}
