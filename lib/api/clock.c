/* SPDX-License-Identifier: MIT */
/*
 * Host↔GPU clock calibration (docs/clock.md): the host's half of the
 * ping-pong with the kernel of lib/device/clock_sync.cu, the calibration a
 * context keeps, and the egpu_clock_* API.
 *
 * Per context, made at the first calibration and kept until the context is
 * freed: the kernel's module, a non-blocking stream, and the mailbox (one
 * page of host memory mapped into the GPU).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "api/clock.h"
#include "api/internal.h"
#include "cuda/cu.h"

#define CLOCK_ROUNDS 64
/* How long the host waits for the GPU to start the kernel, to answer one
 * ping, and to end the kernel after the last. */
#define START_TIMEOUT_MS 500
#define ROUND_TIMEOUT_NS 10000000ull
#define DONE_TIMEOUT_MS 100
/* How long the kernel waits for the next ping before it ends by itself. */
#define KERNEL_IDLE_TIMEOUT_NS 1000000000ull

_Static_assert(sizeof(struct clock_mailbox) <= 4096, "the mailbox fits a page");

struct clock_state {
	pthread_mutex_t lock;
	void *cu_ctx;             /* CUcontext of everything below, once made */
	CUmodule mod;
	CUfunction fn;
	CUstream stream;
	struct clock_mailbox *mb; /* host address */
	CUdeviceptr mb_dev;       /* its device address; 0: not registered */
	bool lost;                /* a kernel may still use mb: keep mb and mod */
	bool started;             /* clock_ctx_start() ran */
	bool have;                /* sync holds a calibration */
	struct egpu_clock sync;
};

static void clock_init(void *st)
{
	pthread_mutex_init(&((struct clock_state *)st)->lock, NULL);
}

static void clock_fini(void *st)
{
	pthread_mutex_destroy(&((struct clock_state *)st)->lock);
}

/* The context's clock state, made at the first call; NULL: out of memory. */
static struct clock_state *clock_state(struct egpu_ctx *ctx)
{
	return lazy_make((void **)&ctx->clock, sizeof(struct clock_state),
			 clock_init, clock_fini, "clock calibration");
}

/* The mailbox takes a page of its own (registered whole). */
static size_t mailbox_bytes(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : 4096;
}

static bool kernel_running(void *mb)
{
	return __atomic_load_n(&((struct clock_mailbox *)mb)->state,
			       __ATOMIC_ACQUIRE) != CLOCK_STATE_IDLE;
}

static bool kernel_done(void *mb)
{
	return __atomic_load_n(&((struct clock_mailbox *)mb)->state,
			       __ATOMIC_ACQUIRE) == CLOCK_STATE_DONE;
}

/* Release what clock_setup() made, in the context it was made in. */
static void clock_teardown(struct clock_state *st)
{
	const struct cu_driver *d = cu();
	CUcontext cur = NULL;

	if (!d || !st->cu_ctx)
		return;
	if (st->lost && kernel_done(st->mb))
		st->lost = false;
	d->cuCtxGetCurrent(&cur);
	if (cur != st->cu_ctx)
		d->cuCtxSetCurrent(st->cu_ctx);
	if (st->stream)
		d->cuStreamDestroy(st->stream); /* returns at once; work ends first */
	/* A kernel the GPU never ran may run later: its code and mailbox stay
	 * (one page), rather than waiting for it here without a limit. */
	if (!st->lost) {
		if (st->mod)
			d->cuModuleUnload(st->mod);
		if (st->mb_dev)
			d->cuMemHostUnregister(st->mb);
		if (st->mb)
			munmap(st->mb, mailbox_bytes());
	}
	if (cur != st->cu_ctx)
		d->cuCtxSetCurrent(cur);
	st->cu_ctx = NULL;
	st->mod = NULL;
	st->fn = NULL;
	st->stream = NULL;
	st->mb = NULL;
	st->mb_dev = 0;
}

/* The kernel's module from the embedded fatbin, which wants alignment. */
static int load_kernel(struct clock_state *st)
{
	size_t len = (clock_kernel_image_len + 63) & ~(size_t)63;
	char *image = aligned_alloc(64, len);
	int err;

	if (!image)
		return err_set(EGPU_ENOMEM, "clock calibration: out of memory");
	memcpy(image, clock_kernel_image, clock_kernel_image_len);
	err = cu_module_load_ptx(image, &st->mod);
	free(image);
	if (!err)
		err = cu_check(cu()->cuModuleGetFunction(&st->fn, st->mod,
							 CLOCK_KERNEL_NAME),
			       "cuModuleGetFunction");
	return err;
}

/* Mailbox, module and stream, in the current CUDA context. */
static int clock_setup(struct clock_state *st)
{
	const struct cu_driver *d = cu();
	CUcontext cur;
	void *mem;
	int err = cu_ctx_current(&cur);

	if (err)
		return err;
	st->cu_ctx = cur;
	mem = mmap(NULL, mailbox_bytes(), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		clock_teardown(st);
		return err_set(EGPU_ENOMEM, "clock calibration: cannot map a page");
	}
	st->mb = mem;
	err = cu_check(d->cuMemHostRegister(mem, mailbox_bytes(),
					    CU_MEMHOSTREGISTER_DEVICEMAP),
		       "cuMemHostRegister");
	if (!err) {
		err = cu_check(d->cuMemHostGetDevicePointer(&st->mb_dev, mem, 0),
			       "cuMemHostGetDevicePointer");
		if (err)
			d->cuMemHostUnregister(mem);
	}
	if (!err)
		err = load_kernel(st);
	if (!err)
		err = cu_check(d->cuStreamCreate(&st->stream, CU_STREAM_NON_BLOCKING),
			       "cuStreamCreate");
	if (err)
		clock_teardown(st);
	return err;
}

static int launch_kernel(struct clock_state *st)
{
	uint64_t timeout = KERNEL_IDLE_TIMEOUT_NS, rounds = CLOCK_ROUNDS;
	void *args[] = { &st->mb_dev, &timeout, &rounds };

	memset(st->mb, 0, sizeof(*st->mb)); /* no kernel uses it now */
	return cu_check(cu()->cuLaunchKernel(st->fn, 1, 1, 1, 1, 1, 1, 0,
					     st->stream, args, NULL),
			"cuLaunchKernel");
}

/* Spin until *word == @want (true) or @timeout_ns passed (false). */
static bool spin_until(volatile uint64_t *word, uint64_t want,
		       uint64_t timeout_ns)
{
	uint64_t start = now_ns();

	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != want)
		if (now_ns() - start > timeout_ns)
			return false;
	return true;
}

/*
 * Ping-pong: the GPU read gpu_ns between t0 and t1 on the host's clock.
 * The round with the shortest round trip is kept in @c (docs/clock.md).
 */
static void play_rounds(struct clock_mailbox *mb, uint64_t timeout_ns,
			struct egpu_clock *c)
{
	for (uint64_t n = 1; n <= CLOCK_ROUNDS; n++) {
		uint64_t t0 = now_ns(), t1, g;

		__atomic_store_n(&mb->ping, n, __ATOMIC_RELEASE);
		if (!spin_until(&mb->pong, n, timeout_ns))
			return;
		t1 = now_ns();
		g = mb->gpu_ns;
		if (!c->rounds++ || t1 - t0 < c->round_trip_ns) {
			c->round_trip_ns = t1 - t0;
			c->host_ns = t0 + (t1 - t0) / 2;
			c->offset_ns = (int64_t)(g - c->host_ns);
		}
	}
}

int clock_exchange(struct clock_mailbox *mb, uint64_t round_timeout_ns,
		   struct egpu_clock *c)
{
	play_rounds(mb, round_timeout_ns, c);
	__atomic_store_n(&mb->ping, CLOCK_PING_STOP, __ATOMIC_RELEASE);
	c->step_ns = mb->step_ns;
	if (!c->step_ns)
		return err_set(EGPU_ECUDA, "clock calibration: %%globaltimer does not advance");
	if (!c->rounds)
		return err_set(EGPU_ECUDA,
			       "clock calibration: the kernel did not answer within %llu us",
			       (unsigned long long)round_timeout_ns / 1000);
	/* Half the round trip, rounded up, and a step of the timer: two
	 * readings may lag true time by anything in [0, step). */
	c->error_ns = (c->round_trip_ns + 1) / 2 + c->step_ns;
	return 0;
}

/* One calibration into @c; st->lock held. */
static int measure(struct clock_state *st, struct egpu_clock *c)
{
	int err;

	if (st->lost && !kernel_done(st->mb))
		return err_set(EGPU_EBUSY,
			       "clock calibration: the GPU has not yet run an earlier calibration kernel");
	st->lost = false;
	if (!st->cu_ctx && (err = clock_setup(st)))
		return err;
	err = launch_kernel(st);
	if (err)
		return err;
	if (!poll_wait(kernel_running, st->mb, START_TIMEOUT_MS)) {
		__atomic_store_n(&st->mb->ping, CLOCK_PING_STOP, __ATOMIC_RELEASE);
		st->lost = true;
		return err_set(EGPU_EBUSY,
			       "clock calibration: the GPU did not start the kernel within %d ms (is it full?)",
			       START_TIMEOUT_MS);
	}
	err = clock_exchange(st->mb, ROUND_TIMEOUT_NS, c);
	if (!poll_wait(kernel_done, st->mb, DONE_TIMEOUT_MS))
		st->lost = true;
	return err;
}

/* Calibrate @ctx's clocks now (its CUDA context current). */
static int clock_calibrate(struct egpu_ctx *ctx)
{
	struct clock_state *st = clock_state(ctx);
	EGPU_OPTS(egpu_clock, c);
	int err;

	if (!st)
		return EGPU_ENOMEM;
	pthread_mutex_lock(&st->lock);
	err = measure(st, &c);
	if (!err) {
		st->sync = c;
		st->have = true;
	}
	pthread_mutex_unlock(&st->lock);
	if (!err)
		log_msg(&ctx->log, EGPU_LOG_DEBUG,
			"clock: globaltimer - CLOCK_MONOTONIC = %lld ns +- %llu ns (round trip %llu ns, timer step %llu ns, %u rounds)",
			(long long)c.offset_ns, (unsigned long long)c.error_ns,
			(unsigned long long)c.round_trip_ns,
			(unsigned long long)c.step_ns, c.rounds);
	return err;
}

/* Whether this is the context's first clock_ctx_start(). */
static bool first_start(struct clock_state *st)
{
	bool first;

	pthread_mutex_lock(&st->lock);
	first = !st->started && !st->have;
	st->started = true;
	pthread_mutex_unlock(&st->lock);
	return first;
}

void clock_ctx_start(struct egpu_ctx *ctx)
{
	struct clock_state *st;

	if (!ctx->cu_ctx)
		return; /* nothing of the context is on a GPU yet */
	st = clock_state(ctx);
	if (!st || !first_start(st))
		return;
	if (clock_calibrate(ctx))
		log_msg(&ctx->log, EGPU_LOG_WARN,
			"clock calibration at the first GPU use failed (egpu_clock_sync() tries again): %s",
			egpu_errmsg());
}

void clock_ctx_free(struct egpu_ctx *ctx)
{
	struct clock_state *st = ctx->clock;

	if (!st)
		return;
	clock_teardown(st);
	if (st->lost)
		log_msg(&ctx->log, EGPU_LOG_WARN,
			"clock: a calibration kernel never ran; its page stays mapped");
	pthread_mutex_destroy(&st->lock);
	free(st);
	ctx->clock = NULL;
}

static int clock_args(egpu_ctx *ctx, const struct egpu_clock *out,
		      const char *fn)
{
	if (!ctx || !out || out->sz < sizeof(size_t))
		return err_set(EGPU_EINVAL, "%s: NULL argument or sz not set", fn);
	if (ctx->offline)
		return err_set(EGPU_EINVAL, "%s: the context is offline (inspection only)",
			       fn);
	return 0;
}

/* Copy the kept calibration to @out (set: clock_have()). */
static void clock_read(struct egpu_ctx *ctx, struct egpu_clock *out)
{
	struct clock_state *st = ctx->clock;
	/* The caller's struct may be older (smaller) than ours. */
	size_t sz = out->sz < sizeof(st->sync) ? out->sz : sizeof(st->sync);

	pthread_mutex_lock(&st->lock);
	memcpy(out, &st->sync, sz);
	pthread_mutex_unlock(&st->lock);
	out->sz = sz;
}

static bool clock_have(struct egpu_ctx *ctx)
{
	struct clock_state *st = __atomic_load_n(&ctx->clock, __ATOMIC_ACQUIRE);
	bool have;

	if (!st)
		return false;
	pthread_mutex_lock(&st->lock);
	have = st->have;
	pthread_mutex_unlock(&st->lock);
	return have;
}

int egpu_clock_sync(egpu_ctx *ctx, struct egpu_clock *out)
{
	int err = clock_args(ctx, out, "egpu_clock_sync");

	if (err)
		return err;
	err = ctx_bind_cuda(ctx);
	if (!err)
		err = clock_calibrate(ctx);
	if (err) {
		err_prefix("egpu_clock_sync");
		return err;
	}
	clock_read(ctx, out);
	return 0;
}

int egpu_clock_get(egpu_ctx *ctx, struct egpu_clock *out)
{
	int err = clock_args(ctx, out, "egpu_clock_get");

	if (err)
		return err;
	if (!clock_have(ctx))
		return egpu_clock_sync(ctx, out);
	clock_read(ctx, out);
	return 0;
}

uint64_t egpu_clock_gpu_to_host(const struct egpu_clock *clk, uint64_t gpu_ns)
{
	uint64_t magnitude;

	if (!clk)
		return 0;
	if (clk->offset_ns >= 0) {
		magnitude = (uint64_t)clk->offset_ns;
		return gpu_ns > magnitude ? gpu_ns - magnitude : 0;
	}
	magnitude = (uint64_t)-(clk->offset_ns + 1) + 1; /* INT64_MIN too */
	return gpu_ns < UINT64_MAX - magnitude ? gpu_ns + magnitude : UINT64_MAX;
}
