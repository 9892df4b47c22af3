/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

#include "xcheck.h"

#define CUPTI_FUNCS(X)                                                        \
	X(cuptiSubscribe)                                                     \
	X(cuptiUnsubscribe)                                                   \
	X(cuptiEnableCallback)                                                \
	X(cuptiGetTimestamp)                                                  \
	X(cuptiActivityEnable)                                                \
	X(cuptiActivityDisable)                                               \
	X(cuptiActivityRegisterCallbacks)                                     \
	X(cuptiActivityFlushAll)                                              \
	X(cuptiActivityGetNextRecord)                                         \
	X(cuptiActivityGetNumDroppedRecords)                                  \
	X(cuptiGetResultString)

#define CUPTI_FIELD(name) __typeof__(&name) name;
static struct {
	CUPTI_FUNCS(CUPTI_FIELD)
} cupti;
#undef CUPTI_FIELD

#define BUFFER_BYTES (1u << 20)

/* The kernel launch calls of the runtime and of the driver (the _ptsz
 * ones: per-thread default streams). The runtime's cudaLaunchKernel comes
 * first; an older CUPTI may not know some of the others. */
static const struct {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
} launch_cbs[] = {
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000 },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz },
};

/* Kernel records as CUPTI delivers them; its buffer callbacks take no
 * user pointer, and CUPTI allows one subscriber: one cross-check at once. */
struct kernel_rec {
	uint32_t corr;
	uint64_t start;
};
static struct kernel_rec *kernels;
static size_t kernel_cnt, kernel_cap;
static uint64_t dropped;
static CUpti_SubscriberHandle subscriber;

static const char *cupti_error(CUptiResult res)
{
	static char buf[160];
	const char *s = "unknown error";

	cupti.cuptiGetResultString(res, &s);
	snprintf(buf, sizeof(buf), "CUPTI: %s", s);
	return buf;
}

static const char *open_cupti(void)
{
	static char why[512];
	const char *libs[] = { getenv("LAUNCHLATE_CUPTI"), LAUNCHLATE_CUPTI_PATH,
			       LAUNCHLATE_CUPTI_SONAME, "libcupti.so" };
	void *lib = NULL;

	for (size_t i = 0; !lib && i < sizeof(libs) / sizeof(libs[0]); i++)
		if (libs[i] && *libs[i])
			lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, sizeof(why), "no libcupti (%s; set LAUNCHLATE_CUPTI=path)",
			 dlerror());
		return why;
	}
#define CUPTI_RESOLVE(name)                                                   \
	if (!(cupti.name = (__typeof__(cupti.name))dlsym(lib, #name)))        \
		return "libcupti lacks " #name;
	CUPTI_FUNCS(CUPTI_RESOLVE)
#undef CUPTI_RESOLVE
	return NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CUPTI's clock against CLOCK_MONOTONIC: the tightest of a few brackets. */
static void relate_clocks(struct xcheck *x)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 64; i++) {
		uint64_t t0 = mono_ns(), c, t1;

		cupti.cuptiGetTimestamp(&c);
		t1 = mono_ns();
		if (t1 - t0 < best) {
			best = t1 - t0;
			x->mono_offset_ns = (int64_t)(c - (t0 + (t1 - t0) / 2));
			x->mono_error_ns = (t1 - t0 + 1) / 2;
		}
	}
}

/*
 * Whether a kernel record carries the runtime call's correlation id or the
 * driver call's inside it, both are kept; the timestamp is the outermost
 * call's entry.
 */
static void CUPTIAPI on_launch(void *user, CUpti_CallbackDomain domain,
			       CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	struct xcheck *x = user;
	struct xcheck_launch *l;

	(void)cbid;
	if (cb->callbackSite != CUPTI_API_ENTER || x->next >= x->n)
		return;
	l = &x->launch[x->next];
	if (!l->api_ns)
		cupti.cuptiGetTimestamp(&l->api_ns);
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && !l->corr)
		l->corr = cb->correlationId;
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && !l->corr_driver)
		l->corr_driver = cb->correlationId;
}

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size,
				      size_t *max_records)
{
	*buf = aligned_alloc(8, BUFFER_BYTES);
	*size = *buf ? BUFFER_BYTES : 0;
	*max_records = 0;
}

static void keep_kernel(const CUpti_ActivityKernel10 *k)
{
	if (kernel_cnt == kernel_cap) {
		size_t cap = kernel_cap ? 2 * kernel_cap : 1024;
		struct kernel_rec *v = realloc(kernels, cap * sizeof(*v));

		if (!v) {
			dropped++;
			return;
		}
		kernels = v;
		kernel_cap = cap;
	}
	kernels[kernel_cnt++] = (struct kernel_rec){ k->correlationId, k->start };
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
				      uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t lost = 0;

	(void)size;
	while (cupti.cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			keep_kernel((const CUpti_ActivityKernel10 *)rec);
	if (cupti.cuptiActivityGetNumDroppedRecords(ctx, stream, &lost) ==
	    CUPTI_SUCCESS)
		dropped += lost;
	free(buf);
}

static const char *subscribe(struct xcheck *x)
{
	CUptiResult res = cupti.cuptiSubscribe(&subscriber, on_launch, x);

	if (res != CUPTI_SUCCESS)
		return cupti_error(res);
	for (size_t i = 0; i < sizeof(launch_cbs) / sizeof(launch_cbs[0]); i++) {
		CUptiResult r = cupti.cuptiEnableCallback(1, subscriber,
							  launch_cbs[i].domain,
							  launch_cbs[i].cbid);

		if (!i)
			res = r;
	}
	if (res == CUPTI_SUCCESS)
		res = cupti.cuptiActivityRegisterCallbacks(buffer_requested,
							   buffer_completed);
	if (res == CUPTI_SUCCESS)
		res = cupti.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (res == CUPTI_SUCCESS)
		return NULL;
	cupti.cuptiUnsubscribe(subscriber);
	return cupti_error(res);
}

bool xcheck_start(struct xcheck *x, size_t n, const char **why)
{
	memset(x, 0, sizeof(*x));
	*why = open_cupti();
	if (*why)
		return false;
	x->launch = calloc(n, sizeof(*x->launch));
	if (!x->launch) {
		*why = "out of memory";
		return false;
	}
	x->n = n;
	x->next = n; /* nothing expected until xcheck_expect() */
	kernel_cnt = 0;
	dropped = 0;
	relate_clocks(x);
	*why = subscribe(x);
	return !*why;
}

void xcheck_expect(struct xcheck *x, size_t i)
{
	x->next = i;
}

static int cmp_corr(const void *a, const void *b)
{
	const struct kernel_rec *x = a, *y = b;

	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* The kernel record with correlation id @corr (kernels sorted), or NULL. */
static const struct kernel_rec *find_kernel(uint32_t corr)
{
	struct kernel_rec key = { .corr = corr };

	if (!corr)
		return NULL;
	return bsearch(&key, kernels, kernel_cnt, sizeof(*kernels), cmp_corr);
}

bool xcheck_stop(struct xcheck *x, const char **why)
{
	CUptiResult res;

	x->next = x->n;
	res = cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	cupti.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cupti.cuptiUnsubscribe(subscriber);
	if (res != CUPTI_SUCCESS) {
		*why = cupti_error(res);
		return false;
	}
	qsort(kernels, kernel_cnt, sizeof(*kernels), cmp_corr);
	for (size_t i = 0; i < x->n; i++) {
		const struct kernel_rec *k = find_kernel(x->launch[i].corr);

		if (!k)
			k = find_kernel(x->launch[i].corr_driver);
		if (k)
			x->launch[i].start_ns = k->start;
	}
	x->dropped = dropped;
	return true;
}

void xcheck_free(struct xcheck *x)
{
	free(x->launch);
	free(kernels);
	kernels = NULL;
	kernel_cnt = kernel_cap = 0;
	memset(x, 0, sizeof(*x));
}
