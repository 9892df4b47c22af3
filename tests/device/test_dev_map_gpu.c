/* SPDX-License-Identifier: MIT */
/*
 * Maps in GPU memory, on a GPU: the device runtime's helpers driven by
 * kernels (map_kernels.cu, built to PTX with the runtime's sources; and a
 * hand-written caller appended to the embedded runtime PTX), the host's
 * dev_map_* operations (copy channels included), map addresses that are
 * the same in every run, and host lookup latency. Exits 77 (skipped) where
 * there is no GPU.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "cuda/cu.h"
#include "device/device.h"
#include "maps/dev_map.h"
#include "maps/layout.h"
#include "test_util.h"

#define GRID_1M 4096 /* blocks of 256 threads: 1M threads */
#define NKEYS 4096

enum { RES_OK, RES_EEXIST, RES_E2BIG, RES_ENOENT, RES_OTHER, RES_BAD, RES_CNT };

struct kv_value {
	uint32_t key;
	uint32_t pad;
	uint64_t tid;
};

struct dim {
	unsigned x, y, z;
};

static const struct cu_driver *d;
static CUmodule kernels, abi;

/* Setup outside a test: report and stop. */
static void setup_fail(const char *what, const char *detail)
{
	fprintf(stderr, "setup: %s: %s\n", what, detail);
	exit(EXIT_FAILURE);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		setup_fail("cannot open", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	if (!buf || fread(buf, 1, n, f) != (size_t)n)
		setup_fail("cannot read", path);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static CUmodule load_ptx(const char *ptx, const char *what)
{
	char log[8192] = "";
	CUjit_option keys[] = { CU_JIT_ERROR_LOG_BUFFER,
				CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *vals[] = { log, (void *)(uintptr_t)sizeof(log) };
	CUmodule mod;
	CUresult res = d->cuModuleLoadDataEx(&mod, ptx, 2, keys, vals);

	if (res != CUDA_SUCCESS) {
		cu_check(res, what);
		fprintf(stderr, "%s\n", log);
		setup_fail(what, egpu_errmsg());
	}
	return mod;
}

static void launch(CUmodule mod, const char *name, struct dim grid,
		   struct dim block, void **args)
{
	CUfunction fn;

	CK_CU(d->cuModuleGetFunction(&fn, mod, name));
	CK_CU(d->cuLaunchKernel(fn, grid.x, grid.y, grid.z, block.x, block.y,
				block.z, 0, NULL, args, NULL));
	CK_CU(d->cuCtxSynchronize());
}

static void launch_1d(const char *name, unsigned blocks, unsigned threads,
		      void **args)
{
	launch(kernels, name, (struct dim){ blocks, 1, 1 },
	       (struct dim){ threads, 1, 1 }, args);
}

static CUdeviceptr dev_zalloc(size_t n)
{
	CUdeviceptr p;

	CK_CU(d->cuMemAlloc(&p, n));
	CK_CU(d->cuMemsetD8(p, 0, n));
	return p;
}

static void *dev_read(CUdeviceptr p, size_t n)
{
	void *buf = malloc(n);

	ck_assert_ptr_nonnull(buf);
	CK_CU(d->cuMemcpyDtoH(buf, p, n));
	return buf;
}

static struct dev_map *map_new(uint32_t type, uint32_t key_size,
			       uint32_t value_size, uint32_t max_entries,
			       uint32_t threads)
{
	struct map_spec spec = { .name = "test", .type = type,
				     .key_size = key_size,
				     .value_size = value_size,
				     .max_entries = max_entries };
	struct dev_map *m;

	ck_assert_msg(dev_map_new(&spec, threads, &m) == 0, "%s", egpu_errmsg());
	return m;
}

static struct dev_map_desc map_desc(struct dev_map *m)
{
	struct dev_map_desc desc;

	CK_CU(d->cuMemcpyDtoH(&desc, dev_map_handle(m), sizeof(desc)));
	return desc;
}

/*
 * Walk the raw table of a hash map with 4-byte keys below @nkeys and
 * kv_value values: every USED key appears once, its value is plausible,
 * no slot is BUSY, and the descriptor's count matches. seen[k] gets 1 for
 * each key present. Returns the number of USED slots.
 */
static uint32_t check_table(struct dev_map *m, uint32_t nkeys, uint8_t *seen)
{
	struct dev_map_desc desc = map_desc(m);
	uint8_t *data = dev_read(desc.data, (size_t)desc.slot_cnt * desc.slot_size);
	uint32_t used = 0;

	memset(seen, 0, nkeys);
	for (uint32_t i = 0; i < desc.slot_cnt; i++) {
		uint8_t *s = data + (size_t)i * desc.slot_size;
		struct dev_slot_hdr hdr;
		struct kv_value v;
		uint32_t key;

		memcpy(&hdr, s, sizeof(hdr));
		ck_assert_uint_eq(hdr.lock, 0);
		ck_assert_uint_ne(dev_slot_state_of(hdr.state), DEV_SLOT_BUSY);
		if (dev_slot_state_of(hdr.state) != DEV_SLOT_USED)
			continue;
		memcpy(&key, s + dev_slot_key_offset(), sizeof(key));
		memcpy(&v, s + dev_slot_value_offset(4), sizeof(v));
		ck_assert_uint_lt(key, nkeys);
		ck_assert_msg(!seen[key], "key %u stored twice", key);
		seen[key] = 1;
		ck_assert_uint_eq(v.key, key);
		ck_assert_uint_eq(v.tid % nkeys, key);
		used++;
	}
	ck_assert_uint_eq(desc.count, used);
	free(data);
	return used;
}

/* Launch hash_insert over 1M threads; results into res[], per-key successes. */
static void insert_1m(struct dev_map *m, uint64_t flags,
		      unsigned long long *res, uint32_t *ok_per_key)
{
	CUdeviceptr dres = dev_zalloc(RES_CNT * sizeof(*res));
	CUdeviceptr dok = dev_zalloc(NKEYS * sizeof(*ok_per_key));
	uint64_t handle = dev_map_handle(m);
	uint32_t nkeys = NKEYS;
	void *args[] = { &handle, &nkeys, &flags, &dres, &dok };
	uint64_t t0 = now_ns();

	launch_1d("hash_insert", GRID_1M, 256, args);
	printf("1M threads updating %d keys (flags %llu): %.2f ms\n", NKEYS,
	       (unsigned long long)flags, (now_ns() - t0) / 1e6);
	CK_CU(d->cuMemcpyDtoH(res, dres, RES_CNT * sizeof(*res)));
	CK_CU(d->cuMemcpyDtoH(ok_per_key, dok, NKEYS * sizeof(*ok_per_key)));
	d->cuMemFree(dres);
	d->cuMemFree(dok);
}

START_TEST(concurrent_insert_any_keeps_each_key_once)
{
	struct dev_map *m = map_new(EGPU_MAP_HASH, 4, 16, NKEYS, 0);
	unsigned long long res[RES_CNT];
	static uint32_t ok[NKEYS];
	uint8_t seen[NKEYS];

	insert_1m(m, EGPU_ANY, res, ok);
	ck_assert_uint_eq(res[RES_OK], GRID_1M * 256ull);
	ck_assert_uint_eq(check_table(m, NKEYS, seen), NKEYS);
	dev_map_free(m);
}
END_TEST

START_TEST(concurrent_insert_noexist_succeeds_once_per_key)
{
	struct dev_map *m = map_new(EGPU_MAP_HASH, 4, 16, NKEYS, 0);
	unsigned long long res[RES_CNT];
	static uint32_t ok[NKEYS];
	uint8_t seen[NKEYS];

	insert_1m(m, EGPU_NOEXIST, res, ok);
	ck_assert_uint_eq(res[RES_OK], NKEYS);
	ck_assert_uint_eq(res[RES_EEXIST], GRID_1M * 256ull - NKEYS);
	for (uint32_t k = 0; k < NKEYS; k++)
		ck_assert_uint_eq(ok[k], 1);
	ck_assert_uint_eq(check_table(m, NKEYS, seen), NKEYS);
	dev_map_free(m);
}
END_TEST

START_TEST(full_map_reports_e2big_and_stays_whole)
{
	const uint32_t max = 1000;
	struct dev_map *m = map_new(EGPU_MAP_HASH, 4, 16, max, 0);
	unsigned long long res[RES_CNT];
	static uint32_t ok[NKEYS];
	uint8_t seen[NKEYS];

	insert_1m(m, EGPU_NOEXIST, res, ok);
	ck_assert_uint_eq(res[RES_OK], max);
	ck_assert_uint_gt(res[RES_E2BIG], 0);
	ck_assert_uint_eq(res[RES_OK] + res[RES_EEXIST] + res[RES_E2BIG],
			  GRID_1M * 256ull);
	ck_assert_uint_eq(check_table(m, NKEYS, seen), max);
	for (uint32_t k = 0; k < NKEYS; k++)
		ck_assert_uint_eq(ok[k], seen[k]);

	/* Replacing works when full, creating does not. */
	insert_1m(m, EGPU_ANY, res, ok);
	ck_assert_uint_eq(res[RES_OK], (GRID_1M * 256ull / NKEYS) * max);
	ck_assert_uint_eq(res[RES_OK] + res[RES_E2BIG], GRID_1M * 256ull);
	ck_assert_uint_eq(check_table(m, NKEYS, seen), max);
	dev_map_free(m);
}
END_TEST

/* Insert, read back, delete from 1M threads: tombstones get reused. */
START_TEST(churn_leaves_an_empty_reusable_map)
{
	struct dev_map *m = map_new(EGPU_MAP_HASH, 4, 16, NKEYS, 0);
	CUdeviceptr dres = dev_zalloc(RES_CNT * sizeof(unsigned long long));
	unsigned long long res[RES_CNT];
	static uint32_t ok[NKEYS];
	uint64_t handle = dev_map_handle(m);
	void *args[] = { &handle, &dres };
	uint8_t seen[NKEYS];

	launch_1d("hash_churn", GRID_1M, 256, args);
	CK_CU(d->cuMemcpyDtoH(res, dres, sizeof(res)));
	d->cuMemFree(dres);
	printf("churn: %llu inserted+deleted, %llu refused as full\n",
	       res[RES_OK], res[RES_E2BIG]);
	ck_assert_uint_eq(res[RES_BAD], 0);
	ck_assert_uint_eq(res[RES_OTHER] + res[RES_EEXIST] + res[RES_ENOENT], 0);
	ck_assert_uint_gt(res[RES_OK], 0);
	ck_assert_uint_eq(res[RES_OK] + res[RES_E2BIG], GRID_1M * 256ull);
	ck_assert_uint_eq(map_desc(m).count, 0);
	/* Walks are bounded by max_probe, not by the (EMPTY-less) table. */
	printf("churn: max_probe %u of %u slots\n", map_desc(m).max_probe,
	       map_desc(m).slot_cnt);
	ck_assert_uint_lt(map_desc(m).max_probe, map_desc(m).slot_cnt / 4);

	insert_1m(m, EGPU_ANY, res, ok);
	ck_assert_uint_eq(res[RES_OK], GRID_1M * 256ull);
	ck_assert_uint_eq(check_table(m, NKEYS, seen), NKEYS);
	dev_map_free(m);
}
END_TEST

static void run_sequence(const char *kernel, struct dev_map *m,
			 const int64_t *want, size_t n)
{
	CUdeviceptr dout = dev_zalloc(n * sizeof(int64_t));
	uint64_t handle = dev_map_handle(m);
	void *args[] = { &handle, &dout };
	int64_t *got;

	launch_1d(kernel, 1, 1, args);
	got = dev_read(dout, n * sizeof(int64_t));
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "%s step %zu: got %lld, want %lld",
			      kernel, i, (long long)got[i], (long long)want[i]);
	free(got);
	d->cuMemFree(dout);
}

START_TEST(hash_flags_as_linux)
{
	static const int64_t want[] = { -ENOENT, 0, -EEXIST, 0, 2, -EINVAL,
					0, -ENOENT, 0, 0 };
	struct dev_map *m = map_new(EGPU_MAP_HASH, 8, 8, 16, 0);
	uint64_t key = 7, value = 0;

	run_sequence("hash_sequence", m, want, sizeof(want) / sizeof(want[0]));
	ck_assert_int_eq(dev_map_lookup(m, &key, &value), 0);
	ck_assert_uint_eq(value, 1);
	ck_assert_uint_eq(map_desc(m).count, 1);
	dev_map_free(m);
}
END_TEST

START_TEST(array_flags_as_linux)
{
	static const int64_t want[] = { 0, -EEXIST, -E2BIG, -EINVAL, 0, 42,
					-EINVAL };
	struct dev_map *m = map_new(EGPU_MAP_ARRAY, 4, 8, 8, 0);
	uint32_t idx = 3;
	uint64_t value = 0;

	run_sequence("array_sequence", m, want, sizeof(want) / sizeof(want[0]));
	ck_assert_int_eq(dev_map_lookup(m, &idx, &value), 0);
	ck_assert_uint_eq(value, 42);
	dev_map_free(m);
}
END_TEST

/* The embedded runtime called from hand-written PTX, as the JIT calls it. */
static void abi_run(struct dev_map *m, uint32_t key, uint64_t value,
		    const int64_t want[4])
{
	uint64_t in[2] = { key, value }, handle = dev_map_handle(m);
	CUdeviceptr din = dev_zalloc(sizeof(in)), dout = dev_zalloc(4 * 8);
	void *args[] = { &handle, &din, &dout };
	int64_t *got;

	CK_CU(d->cuMemcpyHtoD(din, in, sizeof(in)));
	launch(abi, "abi_map_ops", (struct dim){ 1, 1, 1 },
	       (struct dim){ 1, 1, 1 }, args);
	got = dev_read(dout, 4 * 8);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(got[i], want[i]);
	ck_assert(want[3] ? got[3] != 0 : got[3] == 0);
	free(got);
	d->cuMemFree(din);
	d->cuMemFree(dout);
}

START_TEST(embedded_runtime_called_from_ptx)
{
	static const int64_t hash_want[4] = { 0, 77, 0, 0 };
	static const int64_t array_want[4] = { 0, 9, -EINVAL, 1 };
	struct dev_map *h = map_new(EGPU_MAP_HASH, 4, 8, 16, 0);
	struct dev_map *a = map_new(EGPU_MAP_GPU_ARRAY, 4, 8, 8, 0);

	abi_run(h, 5, 77, hash_want);
	abi_run(a, 2, 9, array_want);
	dev_map_free(h);
	dev_map_free(a);
}
END_TEST

/* Linear thread id of the coordinates per_thread packs, computed here. */
static uint64_t linear_id(uint64_t c, struct dim grid, struct dim block)
{
	uint64_t bx = c & 0xff, by = (c >> 8) & 0xff, bz = (c >> 16) & 0xff;
	uint64_t tx = (c >> 24) & 0xff, ty = (c >> 32) & 0xff, tz = (c >> 40) & 0xff;
	uint64_t b = (bz * grid.y + by) * grid.x + bx;

	return b * block.x * block.y * block.z + (tz * block.y + ty) * block.x + tx;
}

static const uint32_t per_thread_types[] = { EGPU_MAP_PERCPU_ARRAY,
					     EGPU_MAP_PERTHREAD_ARRAY };

START_TEST(per_thread_values_land_in_each_thread_slot)
{
	const uint32_t slots = 4096;
	const struct dim grid = { 4, 2, 1 }, block = { 16, 8, 2 };
	const uint32_t launched = 4 * 2 * 16 * 8 * 2;
	const struct dim wrap_grid = { 2 * slots / 256, 1, 1 }, wrap_block = { 256, 1, 1 };
	struct dev_map *m = map_new(per_thread_types[_i], 4, 8, 4, slots);
	uint64_t handle = dev_map_handle(m), *v0, *v1, *v2;
	void *args[] = { &handle };
	uint32_t k0 = 0, k1 = 1, k2 = 2;

	ck_assert_uint_eq(dev_map_threads(m), slots);
	launch(kernels, "per_thread", grid, block, args);
	/* Twice as many threads as slots: ids wrap, two writers a slot. */
	launch(kernels, "per_thread", wrap_grid, wrap_block, args);
	v0 = calloc(slots, 8);
	v1 = calloc(slots, 8);
	v2 = calloc(slots, 8);
	ck_assert_int_eq(dev_map_lookup(m, &k0, v0), 0);
	ck_assert_int_eq(dev_map_lookup(m, &k1, v1), 0);
	ck_assert_int_eq(dev_map_lookup(m, &k2, v2), 0);
	/* The second launch wrote last: slot t holds thread t's or t + slots'. */
	for (uint32_t t = 0; t < slots; t++) {
		ck_assert_uint_eq(v0[t], t < launched ? 3 : 2);
		ck_assert_uint_eq(linear_id(v1[t] - 1, wrap_grid, wrap_block) % slots, t);
		ck_assert_uint_eq(linear_id(v2[t] - 1, wrap_grid, wrap_block) % slots, t);
	}
	free(v0);
	free(v1);
	free(v2);
	dev_map_free(m);
}
END_TEST

START_TEST(per_thread_slot_of_3d_launch)
{
	const uint32_t slots = 4096;
	const struct dim grid = { 4, 2, 1 }, block = { 16, 8, 2 };
	const uint32_t launched = 4 * 2 * 16 * 8 * 2;
	struct dev_map *m = map_new(EGPU_MAP_PERCPU_ARRAY, 4, 8, 4, slots);
	uint64_t handle = dev_map_handle(m), *v1 = calloc(slots, 8);
	void *args[] = { &handle };
	uint32_t k1 = 1;

	launch(kernels, "per_thread", grid, block, args);
	ck_assert_int_eq(dev_map_lookup(m, &k1, v1), 0);
	for (uint32_t t = 0; t < slots; t++)
		if (t < launched)
			ck_assert_uint_eq(linear_id(v1[t] - 1, grid, block), t);
		else
			ck_assert_uint_eq(v1[t], 0);
	free(v1);
	dev_map_free(m);
}
END_TEST

START_TEST(per_thread_slot_counts)
{
	struct dev_map *m;

	m = map_new(EGPU_MAP_PERCPU_ARRAY, 4, 8, 4, 0);
	ck_assert_uint_eq(dev_map_threads(m), 1u << 20);
	dev_map_free(m);
	m = map_new(EGPU_MAP_PERTHREAD_ARRAY, 4, 64, 1024, 0);
	ck_assert_uint_eq(dev_map_threads(m), 4096); /* 256 MiB / 64 KiB */
	dev_map_free(m);
	m = map_new(EGPU_MAP_HASH, 4, 8, 4, 64);
	ck_assert_uint_eq(dev_map_threads(m), 1);
	dev_map_free(m);
}
END_TEST

/* Device lookups of @n 8-byte keys; out[i] = first 8 value bytes or ~0. */
static uint64_t *device_lookup(struct dev_map *m, const void *keys,
			       uint32_t key_size, uint32_t n)
{
	CUdeviceptr dkeys = dev_zalloc((size_t)n * key_size);
	CUdeviceptr dout = dev_zalloc((size_t)n * 8);
	uint64_t handle = dev_map_handle(m), *out;
	void *args[] = { &handle, &dkeys, &key_size, &n, &dout };

	CK_CU(d->cuMemcpyHtoD(dkeys, keys, (size_t)n * key_size));
	launch_1d("lookup_many", (n + 127) / 128, 128, args);
	out = dev_read(dout, (size_t)n * 8);
	d->cuMemFree(dkeys);
	d->cuMemFree(dout);
	return out;
}

struct key12 {
	uint64_t a;
	uint32_t b;
} __attribute__((packed));

START_TEST(host_hash_round_trips)
{
	/* 12-byte keys and values: both padded in the slot. */
	struct dev_map *m = map_new(EGPU_MAP_HASH, 12, 12, 128, 0);
	struct key12 keys[100], k = { 1, 1 }, next;
	uint8_t val[12] = { 1 }, got[12], seen[100] = { 0 };
	uint64_t *dev;
	int n = 0, err;

	ck_assert_int_eq(dev_map_update(m, &k, val, EGPU_EXIST), -ENOENT);
	ck_assert_int_eq(dev_map_update(m, &k, val, EGPU_NOEXIST), 0);
	ck_assert_int_eq(dev_map_update(m, &k, val, EGPU_NOEXIST), -EEXIST);
	val[0] = 2;
	ck_assert_int_eq(dev_map_update(m, &k, val, EGPU_EXIST), 0);
	ck_assert_int_eq(dev_map_update(m, &k, val, 3), -EINVAL);
	ck_assert_int_eq(dev_map_lookup(m, &k, got), 0);
	ck_assert_int_eq(memcmp(got, val, 12), 0);
	ck_assert_int_eq(dev_map_delete(m, &k), 0);
	ck_assert_int_eq(dev_map_delete(m, &k), -ENOENT);
	ck_assert_int_eq(dev_map_lookup(m, &k, got), -ENOENT);

	for (int i = 0; i < 100; i++) {
		keys[i] = (struct key12){ 1000 + i * 7919ull, (uint32_t)i };
		memset(val, 0, sizeof(val));
		memcpy(val, &keys[i].a, 8);
		ck_assert_int_eq(dev_map_update(m, &keys[i], val, EGPU_ANY), 0);
	}
	for (int i = 0; i < 100; i += 2)
		ck_assert_int_eq(dev_map_delete(m, &keys[i]), 0);
	ck_assert_uint_eq(map_desc(m).count, 50);

	/* Iteration visits the 50 remaining keys once each. */
	for (err = dev_map_next_key(m, NULL, &next); !err;
	     err = dev_map_next_key(m, &next, &next), n++) {
		ck_assert_uint_lt(next.b, 100);
		ck_assert_uint_eq(next.b % 2, 1);
		ck_assert(!seen[next.b]);
		seen[next.b] = 1;
	}
	ck_assert_int_eq(err, -ENOENT);
	ck_assert_int_eq(n, 50);

	/* The device sees what the host wrote. */
	dev = device_lookup(m, keys, 12, 100);
	for (int i = 0; i < 100; i++)
		ck_assert_uint_eq(dev[i], i % 2 ? keys[i].a : ~0ull);
	free(dev);

	/* Fill up: 128 entries fit, the 129th does not; a delete makes room. */
	for (int i = 0; i < 78; i++) {
		k = (struct key12){ 5000000 + (uint64_t)i, 7 };
		ck_assert_int_eq(dev_map_update(m, &k, val, EGPU_NOEXIST), 0);
	}
	k.a++;
	ck_assert_int_eq(dev_map_update(m, &k, val, EGPU_ANY), -E2BIG);
	ck_assert_int_eq(dev_map_delete(m, &keys[1]), 0);
	ck_assert_int_eq(dev_map_update(m, &k, val, EGPU_ANY), 0);
	ck_assert_uint_eq(map_desc(m).count, 128);
	dev_map_free(m);
}
END_TEST

/* Host churn turns every EMPTY slot into a tombstone; all still works. */
START_TEST(host_hash_after_churn)
{
	struct dev_map *m = map_new(EGPU_MAP_HASH, 4, 8, 16, 0);
	uint32_t keys[16], next;
	uint64_t v = 5, *dev;
	int n = 0, err;

	for (uint32_t k = 0; k < 200; k++) {
		ck_assert_int_eq(dev_map_update(m, &k, &v, EGPU_NOEXIST), 0);
		ck_assert_int_eq(dev_map_delete(m, &k), 0);
	}
	ck_assert_uint_eq(map_desc(m).count, 0);
	ck_assert_int_eq(dev_map_next_key(m, NULL, &next), -ENOENT);
	for (uint32_t i = 0; i < 16; i++) {
		keys[i] = 1000 + i;
		v = keys[i];
		ck_assert_int_eq(dev_map_lookup(m, &keys[i], &v), -ENOENT);
		ck_assert_int_eq(dev_map_update(m, &keys[i], &v, EGPU_NOEXIST), 0);
	}
	next = 2000;
	ck_assert_int_eq(dev_map_update(m, &next, &v, EGPU_ANY), -E2BIG);
	for (err = dev_map_next_key(m, NULL, &next); !err;
	     err = dev_map_next_key(m, &next, &next))
		n++;
	ck_assert_int_eq(n, 16);
	dev = device_lookup(m, keys, 4, 16);
	for (uint32_t i = 0; i < 16; i++)
		ck_assert_uint_eq(dev[i], keys[i]);
	free(dev);
	dev_map_free(m);
}
END_TEST

START_TEST(host_array_round_trips)
{
	uint64_t init[5] = { 10, 11, 12, 13, 14 }, v, keys64[16];
	struct map_spec spec = { .name = "arr", .type = EGPU_MAP_ARRAY,
				     .key_size = 4, .value_size = 8,
				     .max_entries = 16, .init = init,
				     .init_len = sizeof(init) - 3 };
	uint32_t idx, keys[16], next;
	struct dev_map *m;
	uint64_t *dev;

	ck_assert_int_eq(dev_map_new(&spec, 0, &m), 0);
	ck_assert_uint_eq(dev_map_value_base(m), dev_map_handle(m) + DEV_MAP_DATA_OFFSET);
	idx = 3;
	ck_assert_int_eq(dev_map_lookup(m, &idx, &v), 0);
	ck_assert_uint_eq(v, 13);
	idx = 4; /* only 5 of its 8 init bytes were given */
	ck_assert_int_eq(dev_map_lookup(m, &idx, &v), 0);
	ck_assert_uint_eq(v, 14);
	v = 99;
	idx = 7;
	ck_assert_int_eq(dev_map_update(m, &idx, &v, EGPU_ANY), 0);
	ck_assert_int_eq(dev_map_update(m, &idx, &v, EGPU_NOEXIST), -EEXIST);
	ck_assert_int_eq(dev_map_delete(m, &idx), -EINVAL);
	idx = 16;
	ck_assert_int_eq(dev_map_update(m, &idx, &v, EGPU_ANY), -E2BIG);
	ck_assert_int_eq(dev_map_lookup(m, &idx, &v), -ENOENT);

	for (uint32_t i = 0; i < 16; i++)
		keys[i] = i;
	dev = device_lookup(m, keys, 4, 16);
	memcpy(keys64, dev, sizeof(keys64));
	free(dev);
	ck_assert_uint_eq(keys64[0], 10);
	ck_assert_uint_eq(keys64[7], 99);
	ck_assert_uint_eq(keys64[15], 0);

	ck_assert_int_eq(dev_map_next_key(m, NULL, &next), 0);
	ck_assert_uint_eq(next, 0);
	idx = 15;
	ck_assert_int_eq(dev_map_next_key(m, &idx, &next), -ENOENT);
	idx = 99;
	ck_assert_int_eq(dev_map_next_key(m, &idx, &next), 0);
	ck_assert_uint_eq(next, 0);
	dev_map_free(m);
}
END_TEST

/*
 * Copy channels (a ring's consumer threads use them): a channel runs its
 * queued writes and fills in order, and its next read waits for them;
 * channels 0, 1 and the last work side by side on one map's values.
 */
START_TEST(host_channels_run_in_order)
{
	struct map_spec spec = { .name = "chan", .type = EGPU_MAP_ARRAY,
				     .key_size = 4, .value_size = 8,
				     .max_entries = 2 * DEV_MAP_CHANNELS };
	const uint32_t chans[] = { 0, 1, DEV_MAP_CHANNELS - 1 };
	struct dev_map *m;
	uint64_t *src = NULL, got;

	ck_assert_int_eq(dev_map_new(&spec, 0, &m), 0);
	CK_CU(d->cuMemAllocHost((void **)&src, DEV_MAP_CHANNELS * 8));
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t c = chans[i];
		uint64_t a = dev_map_value_base(m) + 16ull * c, b = a + 8;

		src[c] = 1000 + c;
		/* a: written, then zeroed; b: zeroed, then written. */
		ck_assert_int_eq(dev_map_write_async(m, c, a, &src[c], 8), 0);
		ck_assert_int_eq(dev_map_zero_async(m, c, a, 8), 0);
		ck_assert_int_eq(dev_map_zero_async(m, c, b, 8), 0);
		ck_assert_int_eq(dev_map_write_async(m, c, b, &src[c], 8), 0);
	}
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t c = chans[i];
		uint64_t a = dev_map_value_base(m) + 16ull * c;

		/* The channel's read comes after its queued work. */
		ck_assert_int_eq(dev_map_read(m, c, &got, a + 8, 8), 0);
		ck_assert_uint_eq(got, 1000 + c);
		ck_assert_int_eq(dev_map_sync(m, c), 0);
		ck_assert_int_eq(dev_map_read(m, (c + 1) % DEV_MAP_CHANNELS, &got,
					      a, 8), 0);
		ck_assert_uint_eq(got, 0);
	}
	ck_assert_int_eq(dev_map_sync(m, 5), 0); /* never used: nothing to wait for */
	d->cuMemFreeHost(src);
	dev_map_free(m);
}
END_TEST

/* Host writes all threads' values of a key; each thread reads its own. */
START_TEST(host_per_thread_round_trip)
{
	const uint32_t slots = 256;
	struct dev_map *m = map_new(EGPU_MAP_PERCPU_ARRAY, 4, 8, 2, slots);
	uint64_t vals[256], back[256], *dev;
	uint32_t keys[256];

	for (uint32_t t = 0; t < slots; t++) {
		vals[t] = t * 1000 + 5;
		keys[t] = 1;
	}
	ck_assert_int_eq(dev_map_update(m, &keys[0], vals, EGPU_ANY), 0);
	ck_assert_int_eq(dev_map_lookup(m, &keys[0], back), 0);
	ck_assert_int_eq(memcmp(vals, back, sizeof(vals)), 0);
	dev = device_lookup(m, keys, 4, slots);
	ck_assert_int_eq(memcmp(vals, dev, sizeof(vals)), 0);
	free(dev);
	dev_map_free(m);
}
END_TEST

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#define SAMPLES 2000

/* Median host lookup time in microseconds over random present keys. */
static double lookup_median_us(struct dev_map *m, uint32_t nkeys)
{
	static uint64_t ns[SAMPLES];
	uint8_t value[8];

	for (int i = 0; i < SAMPLES; i++) {
		uint32_t key = (uint32_t)rand() % nkeys;
		uint64_t t0 = now_ns();

		ck_assert_int_eq(dev_map_lookup(m, &key, value), 0);
		ns[i] = now_ns() - t0;
	}
	qsort(ns, SAMPLES, sizeof(ns[0]), cmp_u64);
	printf("  p10 %.2f us  median %.2f us  p90 %.2f us\n", ns[SAMPLES / 10] / 1e3,
	       ns[SAMPLES / 2] / 1e3, ns[SAMPLES * 9 / 10] / 1e3);
	return ns[SAMPLES / 2] / 1e3;
}

/* The floor: one cuMemcpyDtoH of a few sizes; returns the 1 KiB median. */
static double print_copy_latency(void)
{
	static const size_t sizes[] = { 8, 24, 1024, 4096, 65536 };
	static uint64_t ns[SAMPLES];
	static uint8_t buf[65536];
	CUdeviceptr p = dev_zalloc(sizeof(buf));
	double kib_us = 0;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (int i = 0; i < SAMPLES; i++) {
			uint64_t t0 = now_ns();

			CK_CU(d->cuMemcpyDtoH(buf, p, sizes[s]));
			ns[i] = now_ns() - t0;
		}
		qsort(ns, SAMPLES, sizeof(ns[0]), cmp_u64);
		printf("cuMemcpyDtoH %6zu bytes: median %.2f us\n", sizes[s],
		       ns[SAMPLES / 2] / 1e3);
		if (sizes[s] == 1024)
			kib_us = ns[SAMPLES / 2] / 1e3;
	}
	d->cuMemFree(p);
	return kib_us;
}

/*
 * The target is 5 us, but the floor is one small copy, whose cost depends on
 * the machine (and on sanitizers): check that a lookup costs one copy.
 */
START_TEST(host_lookup_latency)
{
	struct dev_map *a = map_new(EGPU_MAP_ARRAY, 4, 8, NKEYS, 0);
	struct dev_map *h = map_new(EGPU_MAP_HASH, 4, 8, NKEYS, 0);
	uint64_t value = 1;
	double copy_us, array_us, hash_us;

	for (uint32_t k = 0; k < NKEYS; k++)
		ck_assert_int_eq(dev_map_update(h, &k, &value, EGPU_NOEXIST), 0);
	copy_us = print_copy_latency();
	printf("host lookup, array of %d:\n", NKEYS);
	array_us = lookup_median_us(a, NKEYS);
	printf("host lookup, full hash of %d:\n", NKEYS);
	hash_us = lookup_median_us(h, NKEYS);
	ck_assert_double_lt(array_us, 1.5 * copy_us);
	ck_assert_double_lt(hash_us, 1.5 * copy_us);
	dev_map_free(a);
	dev_map_free(h);
}
END_TEST

static void load_modules(void)
{
	char *text = read_file(EGPU_TEST_BUILD "/map_kernels.ptx");
	char *caller = read_file(EGPU_TEST_DATA "/abi_kernel.ptx");
	size_t n = strlen(device_runtime_ptx), m = strlen(caller);
	char *both = malloc(n + m + 1);

	if (!both)
		setup_fail("load_modules", "out of memory");
	kernels = load_ptx(text, "loading map_kernels.ptx");
	memcpy(both, device_runtime_ptx, n);
	memcpy(both + n, caller, m + 1);
	abi = load_ptx(both, "loading the runtime PTX with abi_kernel.ptx");
	free(text);
	free(caller);
	free(both);
}

/* One line from this program run with @arg (a fresh process). */
static void run_self(const char *arg, char *line, size_t len)
{
	char cmd[64];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "/proc/%d/exe %s", (int)getpid(), arg);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	if (!fgets(line, (int)len, f))
		line[0] = '\0';
	ck_assert_int_eq(pclose(f), 0);
}

/*
 * A program making the same maps gets them at the same addresses in every
 * run (cuda/stable_alloc.c): instrumented PTX carries the addresses, and
 * the driver's JIT cache keys compiled modules by their text.
 */
START_TEST(map_addresses_same_in_every_run)
{
	char first[64], again[64];

	run_self("--map-handles", first, sizeof(first));
	run_self("--map-handles", again, sizeof(again));
	ck_assert_msg(strlen(first) > 2, "no handles printed");
	ck_assert_str_eq(first, again);
}
END_TEST

/* With --map-handles: the handles of two new maps, on one line. */
static int print_map_handles(void)
{
	struct map_spec spec = { .name = "stable", .type = EGPU_MAP_ARRAY,
				 .key_size = 4, .value_size = 48,
				 .max_entries = 64 };
	struct dev_map *a, *b;

	if (dev_map_new(&spec, 0, &a) || dev_map_new(&spec, 0, &b)) {
		fprintf(stderr, "dev_map_new: %s\n", egpu_errmsg());
		return EXIT_FAILURE;
	}
	printf("%#llx %#llx\n", (unsigned long long)dev_map_handle(a),
	       (unsigned long long)dev_map_handle(b));
	dev_map_free(b);
	dev_map_free(a);
	return 0;
}

int main(int argc, char **argv)
{
	TCase *dev, *host;
	CUcontext ctx;
	Suite *s;

	/* cu() is what egpu_gpu_available() asks, without the API layer. */
	d = cu();
	if (!d) {
		printf("skipped: no GPU (%s)\n", egpu_errmsg());
		return 77;
	}
	if (cu_ctx_current(&ctx)) {
		printf("no CUDA context: %s\n", egpu_errmsg());
		return EXIT_FAILURE;
	}
	if (argc > 1 && !strcmp(argv[1], "--map-handles"))
		return print_map_handles();
	load_modules();

	s = suite_create("dev_map_gpu");
	dev = tcase_create("device");
	host = tcase_create("host");
	tcase_add_test(dev, concurrent_insert_any_keeps_each_key_once);
	tcase_add_test(dev, concurrent_insert_noexist_succeeds_once_per_key);
	tcase_add_test(dev, full_map_reports_e2big_and_stays_whole);
	tcase_add_test(dev, churn_leaves_an_empty_reusable_map);
	tcase_add_test(dev, hash_flags_as_linux);
	tcase_add_test(dev, array_flags_as_linux);
	tcase_add_test(dev, embedded_runtime_called_from_ptx);
	tcase_add_loop_test(dev, per_thread_values_land_in_each_thread_slot, 0,
			    sizeof(per_thread_types) / sizeof(per_thread_types[0]));
	tcase_add_test(dev, per_thread_slot_of_3d_launch);
	tcase_add_test(dev, per_thread_slot_counts);
	tcase_set_timeout(dev, 120);
	tcase_add_test(host, host_hash_round_trips);
	tcase_add_test(host, host_hash_after_churn);
	tcase_add_test(host, host_array_round_trips);
	tcase_add_test(host, host_channels_run_in_order);
	tcase_add_test(host, host_per_thread_round_trip);
	tcase_add_test(host, host_lookup_latency);
	tcase_add_test(host, map_addresses_same_in_every_run);
	tcase_set_timeout(host, 120);
	suite_add_tcase(s, dev);
	suite_add_tcase(s, host);

	/* A CUDA context does not survive fork(): run the tests in-process. */
	return tu_run_suite(s, false);
}
