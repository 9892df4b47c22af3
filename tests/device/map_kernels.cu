/* SPDX-License-Identifier: MIT */
/*
 * Kernels that drive the device runtime's map helpers the way translated
 * programs do: keys and values on the thread's stack, passed as generic
 * pointers. The runtime's sources are included so one PTX module holds both
 * (text-level PTX cannot link separately compiled -rdc code).
 */
#include "runtime.cu"

/* A hash value: the key it was stored under and the thread that wrote it. */
struct kv_value {
	uint32_t key;
	uint32_t pad;
	uint64_t tid;
};

/* Outcome counters of the concurrent kernels. */
enum { RES_OK, RES_EEXIST, RES_E2BIG, RES_ENOENT, RES_OTHER, RES_BAD, RES_CNT };

__device__ static uint64_t gid(void)
{
	return rt_global_thread_id();
}

__device__ static void count_result(unsigned long long *res, int64_t r)
{
	int i = r == 0 ? RES_OK : r == -EEXIST ? RES_EEXIST :
		r == -E2BIG ? RES_E2BIG : r == -ENOENT ? RES_ENOENT : RES_OTHER;

	atomicAdd(&res[i], 1ull);
}

/* Thread t inserts key t % nkeys; ok_per_key counts successes per key. */
extern "C" __global__ void hash_insert(uint64_t map, uint32_t nkeys,
				       uint64_t flags, unsigned long long *res,
				       uint32_t *ok_per_key)
{
	uint32_t key = (uint32_t)(gid() % nkeys);
	struct kv_value v = { key, 0, gid() };
	int64_t r = (int64_t)egpu_dev_map_update_elem(map, (uint64_t)&key,
						       (uint64_t)&v, flags);

	count_result(res, r);
	if (r == 0)
		atomicAdd(&ok_per_key[key], 1u);
}

/*
 * Every thread creates its own key, checks it reads back, deletes it:
 * exercises tombstones and slot reuse under contention.
 */
extern "C" __global__ void hash_churn(uint64_t map, unsigned long long *res)
{
	uint32_t key = (uint32_t)gid();
	struct kv_value v = { key, 0, gid() }, *got;
	int64_t r = (int64_t)egpu_dev_map_update_elem(map, (uint64_t)&key,
						       (uint64_t)&v, EGPU_NOEXIST);

	count_result(res, r);
	if (r != 0)
		return;
	got = (struct kv_value *)egpu_dev_map_lookup_elem(map, (uint64_t)&key);
	if (!got || got->key != key || got->tid != gid())
		atomicAdd(&res[RES_BAD], 1ull);
	if (egpu_dev_map_delete_elem(map, (uint64_t)&key) != 0)
		atomicAdd(&res[RES_BAD], 1ull);
}

/* One thread runs a fixed sequence; out[i] is the i-th result. */
extern "C" __global__ void hash_sequence(uint64_t map, int64_t *out)
{
	uint64_t key = 7, one = 1, two = 2, *v;
	int n = 0;

	out[n++] = egpu_dev_map_update_elem(map, (uint64_t)&key, (uint64_t)&one, EGPU_EXIST);
	out[n++] = egpu_dev_map_update_elem(map, (uint64_t)&key, (uint64_t)&one, EGPU_NOEXIST);
	out[n++] = egpu_dev_map_update_elem(map, (uint64_t)&key, (uint64_t)&two, EGPU_NOEXIST);
	out[n++] = egpu_dev_map_update_elem(map, (uint64_t)&key, (uint64_t)&two, EGPU_EXIST);
	v = (uint64_t *)egpu_dev_map_lookup_elem(map, (uint64_t)&key);
	out[n++] = v ? (int64_t)*v : -1000;
	out[n++] = egpu_dev_map_update_elem(map, (uint64_t)&key, (uint64_t)&one, 4);
	out[n++] = egpu_dev_map_delete_elem(map, (uint64_t)&key);
	out[n++] = egpu_dev_map_delete_elem(map, (uint64_t)&key);
	out[n++] = (int64_t)egpu_dev_map_lookup_elem(map, (uint64_t)&key);
	out[n++] = egpu_dev_map_update_elem(map, (uint64_t)&key, (uint64_t)&one, EGPU_ANY);
}

extern "C" __global__ void array_sequence(uint64_t map, int64_t *out)
{
	uint32_t idx = 3, past_end = 8;
	uint64_t val = 42, *v;
	int n = 0;

	out[n++] = egpu_dev_map_update_elem(map, (uint64_t)&idx, (uint64_t)&val, EGPU_ANY);
	out[n++] = egpu_dev_map_update_elem(map, (uint64_t)&idx, (uint64_t)&val, EGPU_NOEXIST);
	out[n++] = egpu_dev_map_update_elem(map, (uint64_t)&past_end, (uint64_t)&val, EGPU_ANY);
	out[n++] = egpu_dev_map_update_elem(map, (uint64_t)&idx, (uint64_t)&val, 3);
	out[n++] = (int64_t)egpu_dev_map_lookup_elem(map, (uint64_t)&past_end);
	v = (uint64_t *)egpu_dev_map_lookup_elem(map, (uint64_t)&idx);
	out[n++] = v ? (int64_t)*v : -1000;
	out[n++] = egpu_dev_map_delete_elem(map, (uint64_t)&idx);
}

/* The block and thread coordinates, packed 8 bits each. */
__device__ static uint64_t coords(void)
{
	return (uint64_t)blockIdx.x | (uint64_t)blockIdx.y << 8 |
	       (uint64_t)blockIdx.z << 16 | (uint64_t)threadIdx.x << 24 |
	       (uint64_t)threadIdx.y << 32 | (uint64_t)threadIdx.z << 40;
}

/*
 * Per-thread map: key 1 gets the thread's coordinates + 1 by update, key 2
 * gets them through the pointer lookup returns, key 0 counts writers.
 */
extern "C" __global__ void per_thread(uint64_t map)
{
	uint32_t k0 = 0, k1 = 1, k2 = 2;
	uint64_t c = coords() + 1, *p;

	egpu_dev_map_update_elem(map, (uint64_t)&k1, (uint64_t)&c, EGPU_ANY);
	p = (uint64_t *)egpu_dev_map_lookup_elem(map, (uint64_t)&k2);
	if (p)
		*p = c;
	p = (uint64_t *)egpu_dev_map_lookup_elem(map, (uint64_t)&k0);
	if (p)
		atomicAdd((unsigned long long *)p, 1ull);
}

/* out[i]: the 8-byte value of keys[i] (key_size bytes each), or ~0. */
extern "C" __global__ void lookup_many(uint64_t map, const uint8_t *keys,
				       uint32_t key_size, uint32_t n,
				       uint64_t *out)
{
	uint64_t i = gid(), *v;
	uint8_t key[16];

	if (i >= n)
		return;
	for (uint32_t b = 0; b < key_size; b++)
		key[b] = keys[i * key_size + b];
	v = (uint64_t *)egpu_dev_map_lookup_elem(map, (uint64_t)key);
	out[i] = v ? *v : ~0ull;
}
