// SPDX-License-Identifier: MIT
/*
 * A stand-in libcupti.so for running the whole collector without a GPU:
 * the CUPTI functions the collector calls, and fake_* calls that play a
 * CUDA program: a runtime call with its nested driver call (callbacks at
 * entry and exit, on the calling thread), and the activity records the
 * GPU would produce, handed over at the next flush. The driver call's
 * correlation id differs from the runtime's when asked, and the GPU
 * records carry the driver's, as CUPTI may do.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_PENDING 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_CallbackFunc callback;
static bool subscribed, activity_on, copies_on;
static bool enabled[2][1024];   /* [runtime, driver][cbid] */
static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static uint32_t next_corr = 1;
static union record {
	CUpti_Activity base;
	CUpti_ActivityKernel10 kernel;
	CUpti_ActivityMemcpy6 memcpy;
	CUpti_ActivityMemset4 memset;
} pending[MAX_PENDING];
static size_t pending_n;
/* when the stream's last kernel ends: kernels of a stream run one by one */
static uint64_t stream_busy;

/* Set by a test: another tool holds CUPTI. */
EXPORT bool fake_other_subscriber;

/* The callbacks this CUPTI knows: id, name, and the API's own name. */
static const struct {
	CUpti_CallbackDomain domain;
	uint32_t cbid;
	const char *name, *fn;
} names[] = {
	{ CUPTI_CB_DOMAIN_RUNTIME_API,
	  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	  "cudaLaunchKernel_v7000", "cudaLaunchKernel" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API,
	  CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
	  "cudaGraphLaunch_v10000", "cudaGraphLaunch" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
	  "cudaMemcpy_v3020", "cudaMemcpy" },
	/* an API gone from this driver: enabling it is refused */
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
	  "cudaLaunch_v3020", "cudaLaunch" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API,
	  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000,
	  "cudaLaunchHostFunc_v10000", "cudaLaunchHostFunc" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API,
	  CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
	  "cudaDeviceSynchronize_v3020", "cudaDeviceSynchronize" },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	  "cuLaunchKernel", "cuLaunchKernel" },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
	  "cuGraphLaunch", "cuGraphLaunch" },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
	  "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,
	  "cudaMemset_v3020", "cudaMemset" },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
	  "cuMemsetD8_v2", "cuMemsetD8_v2" },
};

EXPORT CUptiResult cuptiGetVersion(uint32_t *v)
{
	*v = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	*s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ?
		"CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" :
		"CUPTI_ERROR_FAKE";
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub,
				  CUpti_CallbackFunc cb, void *user)
{
	(void)user;
	if (subscribed || fake_other_subscriber)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	subscribed = true;
	callback = cb;
	*sub = (CUpti_SubscriberHandle)&callback;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
	(void)sub;
	subscribed = false;
	memset(enabled, 0, sizeof(enabled));
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle sub,
				       CUpti_CallbackDomain domain,
				       CUpti_CallbackId cbid)
{
	(void)sub;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE)
		return CUPTI_SUCCESS;
	if (cbid >= 1024 || (domain != CUPTI_CB_DOMAIN_RUNTIME_API &&
			     domain != CUPTI_CB_DOMAIN_DRIVER_API) ||
	    (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
	     cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020))
		return CUPTI_ERROR_INVALID_PARAMETER;
	enabled[domain == CUPTI_CB_DOMAIN_DRIVER_API][cbid] = on;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain,
					uint32_t cbid, const char **name)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].domain == domain && names[i].cbid == cbid) {
			*name = names[i].name;
			return CUPTI_SUCCESS;
		}
	}
	return CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	*t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return CUPTI_SUCCESS;
}

static CUptiResult activity_switch(CUpti_ActivityKind kind, bool on)
{
	if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		activity_on = on;
	else if (kind == CUPTI_ACTIVITY_KIND_MEMCPY ||
		 kind == CUPTI_ACTIVITY_KIND_MEMSET)
		copies_on = on;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	return activity_switch(kind, true);
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	return activity_switch(kind, false);
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(
	CUpti_BuffersCallbackRequestFunc req,
	CUpti_BuffersCallbackCompleteFunc done)
{
	requested = req;
	completed = done;
	return CUPTI_SUCCESS;
}

/* Records sit one after another, each its union's size. */
EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid,
					      CUpti_Activity **rec)
{
	uint8_t *next = *rec ? (uint8_t *)*rec + sizeof(union record) : buf;

	if (next + sizeof(union record) > buf + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)next;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx,
						     uint32_t stream,
						     size_t *dropped)
{
	(void)ctx;
	(void)stream;
	*dropped = 0;
	return CUPTI_SUCCESS;
}

/* Deliver the pending records in buffers of the collector's size. */
EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	size_t done = 0;

	(void)flag;
	pthread_mutex_lock(&lock);
	while (done < pending_n && requested) {
		uint8_t *buf;
		size_t size, max, n;

		requested(&buf, &size, &max);
		n = size / sizeof(union record);
		if (n > pending_n - done)
			n = pending_n - done;
		memcpy(buf, &pending[done], n * sizeof(union record));
		done += n;
		completed(NULL, 0, buf, size, n * sizeof(union record));
	}
	pending_n = 0;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

static void api(CUpti_CallbackDomain domain, uint32_t cbid,
		CUpti_ApiCallbackSite site, uint32_t corr)
{
	uint64_t data;
	CUpti_CallbackData cb = { .callbackSite = site,
		.correlationData = &data, .correlationId = corr };

	if (!subscribed ||
	    !enabled[domain == CUPTI_CB_DOMAIN_DRIVER_API][cbid])
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].domain == domain && names[i].cbid == cbid)
			cb.functionName = names[i].fn;
	callback(NULL, domain, cbid, &cb);
}

static uint32_t new_corr(void)
{
	return __atomic_fetch_add(&next_corr, 1, __ATOMIC_RELAXED);
}

/* Queue @r, as the GPU ran it now, for the call with id @corr. */
static void queue(union record r, uint32_t corr)
{
	uint64_t t;

	cuptiGetTimestamp(&t);
	switch (r.base.kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		if (!activity_on)
			return;
		r.kernel.correlationId = corr;
		pthread_mutex_lock(&lock);
		r.kernel.start = t + 1000 > stream_busy ? t + 1000 : stream_busy;
		r.kernel.end = stream_busy = r.kernel.start + 2000;
		pthread_mutex_unlock(&lock);
		r.kernel.streamId = 7;
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		if (!copies_on)
			return;
		r.memcpy.correlationId = corr;
		r.memcpy.start = t;
		r.memcpy.end = t + 500;
		break;
	default:
		if (!copies_on)
			return;
		r.memset.correlationId = corr;
		r.memset.start = t;
		r.memset.end = t + 200;
	}
	pthread_mutex_lock(&lock);
	if (pending_n < MAX_PENDING)
		pending[pending_n++] = r;
	pthread_mutex_unlock(&lock);
}

static union record kernel_record(const char *name)
{
	union record r = { .kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL };

	r.kernel.name = name;
	return r;
}

/*
 * A runtime call (@rt) and the driver call it makes (@drv); @split: the
 * driver call gets its own correlation id. The GPU runs @n of @gpu, under
 * the driver call's id.
 */
static void runtime_call(uint32_t rt, uint32_t drv, bool split,
			 union record gpu, int n)
{
	uint32_t outer = new_corr(), inner = split ? new_corr() : outer;

	api(CUPTI_CB_DOMAIN_RUNTIME_API, rt, CUPTI_API_ENTER, outer);
	api(CUPTI_CB_DOMAIN_DRIVER_API, drv, CUPTI_API_ENTER, inner);
	for (int i = 0; i < n; i++)
		queue(gpu, inner);
	api(CUPTI_CB_DOMAIN_DRIVER_API, drv, CUPTI_API_EXIT, inner);
	api(CUPTI_CB_DOMAIN_RUNTIME_API, rt, CUPTI_API_EXIT, outer);
}

EXPORT void fake_launch(const char *kernel, bool split)
{
	runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		     CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, split,
		     kernel_record(kernel), 1);
}

EXPORT void fake_graph_launch(const char *kernel, int kernels)
{
	runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
		     CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, true,
		     kernel_record(kernel), kernels);
}

EXPORT void fake_memcpy(void)
{
	union record r = { .memcpy.kind = CUPTI_ACTIVITY_KIND_MEMCPY };

	r.memcpy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	r.memcpy.bytes = 4096;
	runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
		     CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, true, r, 1);
}

EXPORT void fake_memset(void)
{
	union record r = { .memset.kind = CUPTI_ACTIVITY_KIND_MEMSET };

	r.memset.bytes = 1024;
	runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,
		     CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, true, r, 1);
}

/* A call the program makes itself; the GPU runs @gpu unless NULL. */
static void direct_call(CUpti_CallbackDomain domain, uint32_t cbid,
			const union record *gpu)
{
	uint32_t corr = new_corr();

	api(domain, cbid, CUPTI_API_ENTER, corr);
	if (gpu)
		queue(*gpu, corr);
	api(domain, cbid, CUPTI_API_EXIT, corr);
}

EXPORT void fake_driver_launch(const char *kernel)
{
	union record r = kernel_record(kernel);

	direct_call(CUPTI_CB_DOMAIN_DRIVER_API,
		    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &r);
}

/* A call the collector does not ask for. */
EXPORT void fake_synchronize(void)
{
	direct_call(CUPTI_CB_DOMAIN_RUNTIME_API,
		    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, NULL);
}
