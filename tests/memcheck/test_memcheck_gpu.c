// SPDX-License-Identifier: MIT
/*
 * The allocation table on a GPU: the driver backend (memcheck_dev.c)
 * publishing indexes and writing state words, and a kernel doing the
 * probe's lookup (lookup_kernel.cu) on what it finds there: synchronous
 * allocations and frees, a pool allocation and its free in stream order
 * (a kernel queued before the free sees it live, one after sees it dead,
 * and the record leaves when the stream ran the free's host function),
 * and VMM maps merged across their boundary then cut. Exits 77 (skipped)
 * without a GPU.
 */
#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "memcheck/memcheck_dev.h"
#include "memcheck/memcheck_table.h"
#include "core/core.h"
#include "cuda/cu.h"
#include "test_util.h"

#define MAXQ 8

static const struct cu_driver *d;
static CUfunction lookup;
static struct mc_dev *dev;
static struct mc_table *t;

/* A launch of the lookup on @s: its queries, and where its answers go. */
struct run {
	CUdeviceptr addrs, sizes, out;
	int n;
};

static void enqueue(struct run *r, CUstream s, const uint64_t *addrs,
		    const uint32_t *sizes, int n)
{
	unsigned long long cell = mc_dev_cell(dev), states = mc_dev_states(dev);
	void *args[] = { &cell, &states, &r->addrs, &r->sizes, &r->out, &n };

	r->n = n;
	CK_CU(d->cuMemAlloc(&r->addrs, MAXQ * 8));
	CK_CU(d->cuMemAlloc(&r->sizes, MAXQ * 4));
	CK_CU(d->cuMemAlloc(&r->out, MAXQ * 4));
	CK_CU(d->cuMemcpyHtoDAsync(r->addrs, addrs, n * 8u, s));
	CK_CU(d->cuMemcpyHtoDAsync(r->sizes, sizes, n * 4u, s));
	CK_CU(d->cuLaunchKernel(lookup, 1, 1, 1, MAXQ, 1, 1, 0, s, args, NULL));
}

/* The answers of @r (after its stream finished), then its buffers go. */
static void answers(struct run *r, int *out)
{
	CK_CU(d->cuMemcpyDtoH(out, r->out, r->n * 4u));
	CK_CU(d->cuMemFree(r->addrs));
	CK_CU(d->cuMemFree(r->sizes));
	CK_CU(d->cuMemFree(r->out));
}

/* A driver function libegpu's table (cu.h) does not carry. */
static void *drv(const char *name)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *fn = lib ? dlsym(lib, name) : NULL;

	ck_assert_msg(fn, "the driver has no %s", name);
	return fn;
}

static void check_now(const uint64_t *addrs, const uint32_t *sizes, int n,
		      const int *want)
{
	struct run r;
	int got[MAXQ];

	enqueue(&r, NULL, addrs, sizes, n);
	CK_CU(d->cuCtxSynchronize());
	answers(&r, got);
	for (int i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "query %d: got %d, want %d", i,
			      got[i], want[i]);
}

static void setup(void)
{
	CUcontext ctx;
	CUmodule mod;
	char *ptx = tu_read_file(EGPU_TEST_BUILD "/lookup_kernel.ptx", NULL);
	struct mc_backend be;

	d = cu();
	ck_assert_ptr_nonnull(d);
	ck_assert_msg(cu_ctx_current(&ctx) == 0, "%s", egpu_errmsg());
	ck_assert_int_eq(cu_module_load_ptx(ptx, &mod), 0);
	free(ptx);
	CK_CU(d->cuModuleGetFunction(&lookup, mod, "mc_lookup"));
	ck_assert_int_eq(mc_dev_new(1024, NULL, &dev), 0);
	be = mc_dev_backend(dev);
	t = mc_table_new(&be);
	ck_assert_ptr_nonnull(t);
}

START_TEST(sync_alloc_free)
{
	CUdeviceptr a;
	uint64_t q[4];
	uint32_t sz[4] = { 4, 4, 4, 4 };

	setup();
	CK_CU(d->cuMemAlloc(&a, 4 << 20));
	q[0] = a, q[1] = a + (4 << 20) - 4, q[2] = a + (4 << 20), q[3] = a - 4;
	ck_assert_int_eq(mc_table_alloc(t, a, 4 << 20, MC_KIND_ALLOC), 0);
	check_now(q, sz, 4, (int[]){ 1, 1, 0, 0 });
	ck_assert_int_eq(mc_table_free_at(t, a, NULL, false), 0);
	CK_CU(d->cuMemFree(a));
	check_now(q, sz, 1, (int[]){ 0 });
}
END_TEST

START_TEST(stream_ordered_free)
{
	CUresult (*alloc_async)(CUdeviceptr *, size_t, CUstream);
	CUresult (*free_async)(CUdeviceptr, CUstream);
	CUstream s;
	CUdeviceptr p;
	struct run before, after;
	uint64_t q[2];
	uint32_t sz[2] = { 4, 4 };
	int got[2];

	setup();
	*(void **)&alloc_async = drv("cuMemAllocAsync");
	*(void **)&free_async = drv("cuMemFreeAsync");
	CK_CU(d->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK_CU(alloc_async(&p, 1024, s));
	ck_assert_int_eq(mc_table_alloc_async(t, p, 1024, MC_KIND_ASYNC, s, false), 0);
	q[0] = p + 1020, q[1] = p + 1024;
	enqueue(&before, s, q, sz, 2);
	ck_assert_int_eq(mc_table_free_at(t, p, s, false), 0);
	CK_CU(free_async(p, s));
	enqueue(&after, s, q, sz, 2);
	CK_CU(d->cuStreamSynchronize(s));
	answers(&before, got);
	ck_assert_int_eq(got[0], 1);
	ck_assert_int_eq(got[1], 0);
	answers(&after, got);
	ck_assert_int_eq(got[0], 0);
	ck_assert_int_eq(got[1], 0);
	ck_assert_uint_eq(mc_table_count(t), 0); /* the host function ran */
	CK_CU(d->cuStreamDestroy(s));
}
END_TEST

START_TEST(vmm_maps)
{
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	CUmemAccessDesc acc = { .location = prop.location,
				.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUmemGenericAllocationHandle h[2];
	CUdeviceptr va;
	size_t g = 0;
	uint64_t q[3];
	uint32_t sz[3] = { 8, 4, 4 };

	setup();
	CK_CU(d->cuMemGetAllocationGranularity(&g, &prop,
					       CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CK_CU(d->cuMemAddressReserve(&va, 2 * g, 0, 0, 0));
	for (int i = 0; i < 2; i++) {
		CK_CU(d->cuMemCreate(&h[i], g, &prop, 0));
		CK_CU(d->cuMemMap(va + i * g, g, 0, h[i], 0));
		CK_CU(d->cuMemSetAccess(va + i * g, g, &acc, 1));
		ck_assert_int_eq(mc_table_map(t, va + i * g, g), 0);
	}
	q[0] = va + g - 4, q[1] = va, q[2] = va + g;
	check_now(q, sz, 3, (int[]){ 1, 1, 1 }); /* across the two maps */
	ck_assert_int_eq(mc_table_unmap(t, va, g), 0);
	CK_CU(d->cuMemUnmap(va, g));
	check_now(q, sz, 3, (int[]){ 0, 0, 1 });
	ck_assert_int_eq(mc_table_unmap(t, va + g, g), 0);
	CK_CU(d->cuMemUnmap(va + g, g));
	for (int i = 0; i < 2; i++)
		CK_CU(d->cuMemRelease(h[i]));
	CK_CU(((CUresult(*)(CUdeviceptr, size_t))drv("cuMemAddressFree"))(va, 2 * g));
	check_now(q, sz, 3, (int[]){ 0, 0, 0 });
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("memcheck_gpu");
	TCase *tc = tcase_create("gpu");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, sync_alloc_free);
	tcase_add_test(tc, stream_ordered_free);
	tcase_add_test(tc, vmm_maps);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	tu_require_gpu();
	return tu_run_suite(suite(), false) ? 1 : 0; /* CUDA does not survive the fork */
}
