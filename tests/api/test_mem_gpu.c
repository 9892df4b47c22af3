// SPDX-License-Identifier: MIT
/*
 * Memory probes on a GPU (ctest label gpu; skipped without one): a kernel
 * whose accesses are known (memkernels.cu) runs with a probe counting
 * them by kind and state space and recording every global address. The
 * counts are exact, the addresses are the buffers' own, and the kernel
 * still computes its result; the same for the module retargeted from
 * sm_50.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cu.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "test_util.h"

#define MEM_OBJ EGPU_TEST_BUILD "/memprobe.bpf.o"
#define MEM_PTX EGPU_TEST_BUILD "/memkernels.ptx"
#define BLOCK 256 /* as memkernels.cu */
#define GRID 8
#define N (GRID * BLOCK)

/* The kernel's buffers on the device. */
struct bufs {
	CUdeviceptr a, b, out, flag;
};

static void run_vadd(CUmodule mod, struct bufs *d, float *out,
		     unsigned *flag)
{
	const struct cu_driver *cd = cu();
	static float a[N], b[N];
	void *args[] = { &d->a, &d->b, &d->out, &d->flag };
	CUfunction f;

	for (int i = 0; i < N; i++) {
		a[i] = (float)i;
		b[i] = 0.5f * (float)i;
	}
	CK_CU(cd->cuModuleGetFunction(&f, mod, "vadd_mem"));
	CK_CU(cd->cuMemAlloc(&d->a, sizeof(a)));
	CK_CU(cd->cuMemAlloc(&d->b, sizeof(b)));
	CK_CU(cd->cuMemAlloc(&d->out, sizeof(a)));
	CK_CU(cd->cuMemAlloc(&d->flag, sizeof(*flag)));
	CK_CU(cd->cuMemcpyHtoD(d->a, a, sizeof(a)));
	CK_CU(cd->cuMemcpyHtoD(d->b, b, sizeof(b)));
	CK_CU(cd->cuMemsetD8(d->flag, 0, sizeof(*flag)));
	CK_CU(cd->cuLaunchKernel(f, GRID, 1, 1, BLOCK, 1, 1, 0, NULL, args,
				 NULL));
	CK_CU(cd->cuCtxSynchronize());
	CK_CU(cd->cuMemcpyDtoH(out, d->out, sizeof(a)));
	CK_CU(cd->cuMemcpyDtoH(flag, d->flag, sizeof(*flag)));
}

static uint64_t count(egpu_map *counts, unsigned kind, unsigned space)
{
	uint32_t key = kind * 8 + space;
	uint64_t v = 0;

	ck_assert_int_eq(egpu_map_lookup(counts, &key, &v), 0);
	return v;
}

/* Which buffer @addr is in, its index in *i; -1 if none. */
static int buffer_of(const struct bufs *d, uint64_t addr, uint64_t *i)
{
	const CUdeviceptr base[] = { d->a, d->b, d->out, d->flag };
	const uint64_t elems[] = { N, N, N, 1 };

	for (int k = 0; k < 4; k++) {
		if (addr >= base[k] && addr < base[k] + 4 * elems[k] &&
		    (addr - base[k]) % 4 == 0) {
			*i = (addr - base[k]) / 4;
			return k;
		}
	}
	return -1;
}

/* Every recorded address: the buffers', each element once, as accessed. */
static void check_addresses(egpu_map *addrs, const struct bufs *d)
{
	static const unsigned want_kind[] = { EGPU_MEM_LOAD, EGPU_MEM_LOAD,
					      EGPU_MEM_STORE, EGPU_MEM_STORE };
	static uint8_t seen[4][N];
	uint64_t key, next, v, i, n = 0;
	uint64_t *prev = NULL;

	memset(seen, 0, sizeof(seen));
	while (egpu_map_next_key(addrs, prev, &next) == 0) {
		int k = buffer_of(d, next, &i);

		ck_assert_msg(k >= 0, "address 0x%llx is in no buffer",
			      (unsigned long long)next);
		ck_assert_int_eq(egpu_map_lookup(addrs, &next, &v), 0);
		ck_assert_uint_eq(v >> 32, 4);            /* size */
		ck_assert_uint_eq(v & 0xffff, want_kind[k]); /* kind */
		ck_assert(!seen[k][i]);
		seen[k][i] = 1;
		n++;
		key = next;
		prev = &key;
	}
	ck_assert_uint_eq(n, 3 * N + 1);
}

/*
 * XLA ships PTX for sm_50, which the driver still compiles for a Hopper:
 * the module as if written so (.target sm_50, .version 4.2), which
 * libegpu retargets to the device's GPU before splicing the probes in.
 */
static void as_sm50_module(char *ptx)
{
	char *t = strstr(ptx, ".target sm_90"), *v = strstr(ptx, ".version ");

	ck_assert(t && v);
	memcpy(t, ".target sm_50", strlen(".target sm_50"));
	memcpy(v, ".version 4.2", strlen(".version 4.2"));
}

/* _i: 0 the module as nvcc made it, 1 as an sm_50 module */
START_TEST(counts_and_addresses_exact)
{
	EGPU_OPTS(egpu_attach_opts, ao,
		  .mem_spaces = 1u << EGPU_SPACE_GLOBAL | 1u << EGPU_SPACE_SHARED);
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	egpu_obj *obj;
	egpu_map *counts, *addrs;
	struct bufs d;
	static float out[N];
	unsigned flag = 0;
	size_t len;
	char *ptx;
	CUmodule mod;

	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, MEM_OBJ, NULL);
	ck_assert_msg(obj, "load: %s", egpu_errmsg());
	counts = egpu_obj_map(obj, "mem_counts");
	addrs = egpu_obj_map(obj, "mem_addrs");
	ck_assert_msg(egpu_attach_kernel(egpu_obj_prog(obj, "mem_probe"),
					 "vadd_mem", EGPU_ATTACH_MEM, &ao),
		      "%s", egpu_errmsg());
	ptx = tu_read_file(MEM_PTX, &len);
	if (_i)
		as_sm50_module(ptx);
	ck_assert_msg(!egpu_module_load(ctx, &mod, ptx, len), "%s",
		      egpu_errmsg());
	run_vadd(mod, &d, out, &flag);
	for (int i = 0; i < N; i++) {
		int j = i / BLOCK * BLOCK + (i % BLOCK + 1) % BLOCK;

		ck_assert_float_eq(out[i], 1.5f * (float)j);
	}
	ck_assert_uint_eq(flag, 1);
	ck_assert_uint_eq(count(counts, EGPU_MEM_LOAD, EGPU_SPACE_GLOBAL), 2 * N);
	ck_assert_uint_eq(count(counts, EGPU_MEM_STORE, EGPU_SPACE_GLOBAL), N + 1);
	ck_assert_uint_eq(count(counts, EGPU_MEM_STORE, EGPU_SPACE_SHARED), N);
	ck_assert_uint_eq(count(counts, EGPU_MEM_LOAD, EGPU_SPACE_SHARED), N);
	/* The mask left the parameter loads out; nothing else is there. */
	ck_assert_uint_eq(count(counts, EGPU_MEM_LOAD, EGPU_SPACE_PARAM), 0);
	ck_assert_uint_eq(count(counts, EGPU_MEM_LOAD, EGPU_SPACE_GENERIC), 0);
	check_addresses(addrs, &d);
	cu()->cuMemFree(d.a);
	cu()->cuMemFree(d.b);
	cu()->cuMemFree(d.out);
	cu()->cuMemFree(d.flag);
	cu()->cuModuleUnload(mod);
	free(ptx);
	egpu_ctx_free(ctx);
}
END_TEST

int main(void)
{
	Suite *s;
	TCase *tc;

	tu_require_gpu();
	s = suite_create("api_mem_gpu");
	tc = tcase_create("gpu");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, counts_and_addresses_exact, 0, 2);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, false);
}
