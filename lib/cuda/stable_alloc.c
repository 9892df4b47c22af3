/* SPDX-License-Identifier: MIT */
/*
 * Device memory at the same virtual address in every run of a program that
 * allocates in the same order. Map addresses are baked into instrumented
 * PTX, and the driver's JIT cache (~/.nv/ComputeCache) keys compiled
 * modules by their PTX text: with addresses that change from run to run
 * (cuMemAlloc's do), every run of an attached program compiled every module
 * again. Addresses are handed out upward from a fixed base through the
 * driver's virtual memory API; where the driver cannot give the hinted
 * range (taken, or no VMM support), the memory lands where the driver puts
 * it: correct, only not cached across runs.
 */
#include <pthread.h>
#include <stdlib.h>

#include "core/core.h"
#include "cuda/cu.h"

/*
 * One range of virtual addresses for the process, reserved at the first
 * allocation at a fixed address, and carved upward in allocation order.
 * The driver honours the hint for a large range inside the window it
 * manages (driver 580 on x86-64: 64 MiB ranges at 0x7000_0000_0000 and up
 * were granted in every run; 2 MiB ones were not, nor hints at
 * 0x6000_0000_0000 and below). 112 TiB is ~15 TiB below where the kernel
 * places shared libraries and cuMemAlloc's ranges (0x7eXX.. to 0x7fff..,
 * moving with ASLR). 256 GiB is more than any GPU's memory; a process that
 * has used it up gets cuMemAlloc's memory.
 */
#define STABLE_BASE 0x700000000000ull
#define STABLE_SPAN (256ull << 30)

struct stable_block {
	CUdeviceptr ptr;
	size_t len; /* rounded to the granularity */
	struct stable_block *next;
};

static pthread_mutex_t stable_lock = PTHREAD_MUTEX_INITIALIZER;
static CUdeviceptr span_base;
static size_t span_used;
static struct stable_block *blocks;

static CUmemAllocationProp device_prop(CUdevice dev)
{
	return (CUmemAllocationProp){
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev },
	};
}

/* Back and open @len bytes of the span at @p with @dev's memory. */
static CUresult map_at(const struct cu_driver *d, CUdevice dev, CUdeviceptr p,
		       size_t len)
{
	CUmemAllocationProp prop = device_prop(dev);
	CUmemAccessDesc access = {
		.location = prop.location,
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUmemGenericAllocationHandle h;
	CUresult r;

	r = d->cuMemCreate(&h, len, &prop, 0);
	if (r != CUDA_SUCCESS)
		return r;
	r = d->cuMemMap(p, len, 0, h, 0);
	/* the mapping keeps the memory until it is unmapped */
	d->cuMemRelease(h);
	if (r == CUDA_SUCCESS)
		r = d->cuMemSetAccess(p, len, &access, 1);
	if (r != CUDA_SUCCESS)
		d->cuMemUnmap(p, len);
	return r;
}

/* The next @len bytes of the span (reserved at the first call), or 0. */
static CUdeviceptr span_take(const struct cu_driver *d, size_t len)
{
	if (!span_base &&
	    d->cuMemAddressReserve(&span_base, STABLE_SPAN, 0, STABLE_BASE,
				   0) != CUDA_SUCCESS)
		span_base = 0;
	if (!span_base || len > STABLE_SPAN - span_used)
		return 0;
	span_used += len;
	return span_base + span_used - len;
}

/* @len rounded up to the device's allocation granularity, 0 without VMM. */
static size_t stable_len(const struct cu_driver *d, CUdevice dev, size_t len)
{
	CUmemAllocationProp prop = device_prop(dev);
	size_t gran = 0;
	int vmm = 0;

	if (d->cuDeviceGetAttribute(&vmm,
		    CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
		    dev) != CUDA_SUCCESS || !vmm ||
	    d->cuMemGetAllocationGranularity(&gran, &prop,
		    CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || !gran)
		return 0;
	return (len + gran - 1) / gran * gran;
}

static int try_stable(const struct cu_driver *d, size_t len, CUdeviceptr *p)
{
	struct stable_block *b = malloc(sizeof(*b));
	CUdevice dev;
	int ok = 0;

	if (!b || d->cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		goto out;
	b->len = stable_len(d, dev, len);
	if (!b->len)
		goto out;
	pthread_mutex_lock(&stable_lock);
	b->ptr = span_take(d, b->len);
	/* a failed mapping leaves a hole in the span: later runs fail alike */
	if (b->ptr && map_at(d, dev, b->ptr, b->len) == CUDA_SUCCESS) {
		b->next = blocks;
		blocks = b;
		*p = b->ptr;
		ok = 1;
	}
	pthread_mutex_unlock(&stable_lock);
out:
	if (!ok)
		free(b);
	return ok;
}

int cu_alloc_stable(CUdeviceptr *p, size_t len)
{
	const struct cu_driver *d = cu();

	if (!d)
		return EGPU_ENODEV;
	if (try_stable(d, len, p))
		return 0;
	return cu_check(d->cuMemAlloc(p, len), "cuMemAlloc");
}

/* The block of @p, unlinked, or NULL when cuMemAlloc made it. */
static struct stable_block *take_block(CUdeviceptr p)
{
	struct stable_block **at, *b = NULL;

	pthread_mutex_lock(&stable_lock);
	for (at = &blocks; *at; at = &(*at)->next) {
		if ((*at)->ptr == p) {
			b = *at;
			*at = b->next;
			break;
		}
	}
	pthread_mutex_unlock(&stable_lock);
	return b;
}

void cu_free_stable(CUdeviceptr p)
{
	const struct cu_driver *d = cu();
	struct stable_block *b;

	if (!p || !d)
		return;
	b = take_block(p);
	if (!b) {
		d->cuMemFree(p);
		return;
	}
	/* the addresses stay reserved: the span is only ever carved upward */
	d->cuMemUnmap(b->ptr, b->len);
	free(b);
}
