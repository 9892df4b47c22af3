/* SPDX-License-Identifier: MIT */
/*
 * Event ring storage: one anonymous mapping (control page, records, tail
 * pad) that the CPU back end writes directly and that is page-locked and
 * mapped into the GPU (cuMemHostRegister with DEVICEMAP) when the ring's
 * object first uses the GPU, unless the ring's records move to GPU memory
 * then (ring_dev.c). Consumer: ring_consume.c; CPU producer: ring_cpu.c.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/core.h"
#include "cuda/cu.h"
#include "egpu/bpf_maps.h"
#include "maps/ring_impl.h"

static uint64_t pow2_at_least(uint64_t n)
{
	uint64_t p = RING_MIN_BYTES;

	while (p < n && p < RING_MAX_BYTES)
		p <<= 1;
	return p;
}

/*
 * RINGBUF: max_entries is the byte size, as in Linux (which also wants a
 * page multiple; smaller rings are accepted here). PERF_EVENT_ARRAY counts
 * CPUs in max_entries, meaningless on a GPU: one ring of the default size.
 * bpftime's 1527 gives each thread max_entries records of value_size: one
 * shared ring, of the default size or enough for max_entries records.
 */
int ring_map_capacity(const struct map_spec *spec, uint64_t *cap)
{
	uint64_t n = spec->max_entries;

	switch (spec->type) {
	case EGPU_MAP_RINGBUF:
		if (n < RING_MIN_BYTES || n > RING_MAX_BYTES || (n & (n - 1)))
			return err_set(EGPU_EINVAL,
				       "map '%s': ring buffer size %llu is not a power of two in [%u, %u]",
				       spec->name, (unsigned long long)n,
				       RING_MIN_BYTES, RING_MAX_BYTES);
		*cap = n;
		return 0;
	case EGPU_MAP_GPU_RINGBUF:
		if (ring_record_size(spec->value_size) > RING_RECORD_MAX)
			return err_set(EGPU_EINVAL,
				       "map '%s': records of %u bytes exceed the %u-byte limit",
				       spec->name, spec->value_size,
				       RING_RECORD_MAX - RING_HDR_SIZE);
		n *= ring_record_size(spec->value_size);
		*cap = pow2_at_least(n > RING_DEFAULT_BYTES ? n : RING_DEFAULT_BYTES);
		return 0;
	case EGPU_MAP_PERF_EVENT_ARRAY:
		*cap = RING_DEFAULT_BYTES;
		return 0;
	}
	return err_set(EGPU_EINVAL, "map '%s': type %u is not a ring buffer",
		       spec->name, spec->type);
}

static void ring_free_struct(struct event_ring *r)
{
	for (uint32_t k = 0; k < r->readers_made; k++)
		free(r->readers[k].unpacked);
	free(r->readers);
	free(r->name);
	free(r);
}

int ring_make_readers(struct event_ring *r, uint32_t n)
{
	struct ring_reader *v;

	if (n < 1 || n > RING_READERS_MAX)
		return err_set(EGPU_EINVAL,
			       "ring '%s': %u consumer threads (1 to %u)", r->name,
			       n, RING_READERS_MAX);
	if (n <= r->readers_made)
		return 0;
	v = realloc(r->readers, n * sizeof(*v));
	if (!v)
		return err_set(EGPU_ENOMEM, "ring '%s': out of memory", r->name);
	r->readers = v;
	for (; r->readers_made < n; r->readers_made++) {
		struct ring_reader *rd = &v[r->readers_made];

		*rd = (struct ring_reader){ .unpacked = malloc(r->max_record) };
		if (!rd->unpacked)
			return err_set(EGPU_ENOMEM, "ring '%s': out of memory",
				       r->name);
	}
	return 0;
}

int ring_new(const char *name, uint32_t type, uint64_t cap,
	     struct event_ring **out)
{
	long page = sysconf(_SC_PAGESIZE);
	struct event_ring *r;
	size_t len;
	void *mem;

	if (cap < RING_MIN_BYTES || cap > RING_MAX_BYTES || (cap & (cap - 1)))
		return err_set(EGPU_EINVAL, "ring '%s': bad capacity %llu", name,
			       (unsigned long long)cap);
	r = calloc(1, sizeof(*r));
	if (!r)
		return err_set(EGPU_ENOMEM, "ring '%s': out of memory", name);
	r->max_record = cap < RING_RECORD_MAX ? (uint32_t)cap : RING_RECORD_MAX;
	r->name = strdup(name);
	if (!r->name || ring_make_readers(r, 1)) {
		ring_free_struct(r);
		return err_set(EGPU_ENOMEM, "ring '%s': out of memory", name);
	}
	r->type = type;
	r->cap = cap;
	len = RING_DATA_OFFSET + cap + r->max_record;
	len = (len + (size_t)page - 1) & ~((size_t)page - 1);
	/* Anonymous memory reads zero: every header starts unpublished. */
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (mem == MAP_FAILED) {
		ring_free_struct(r);
		return err_set(EGPU_ENOMEM, "ring '%s': cannot map %zu bytes",
			       name, len);
	}
	r->mem = mem;
	r->mem_len = len;
	r->ctl = mem;
	r->data = (uint8_t *)mem + RING_DATA_OFFSET;
	pthread_mutex_init(&r->lock, NULL);
	*out = r;
	return 0;
}

int ring_new_for_map(const struct map_spec *spec, struct event_ring **out)
{
	uint64_t cap = 0; /* gcc -O3 cannot see that err_set() never returns 0 */
	int err = ring_map_capacity(spec, &cap);

	if (!err)
		err = ring_new(spec->name, spec->type, cap, out);
	if (!err && (spec->flags & EGPU_F_RING_DEVICE)) {
		(*out)->in_device_memory = true;
		(*out)->one_shard = spec->flags & EGPU_F_RING_ONE_SHARD;
		(*out)->shards = (*out)->one_shard ? 1 : ring_shards_for(cap);
		(*out)->shard_cap = cap / (*out)->shards;
	}
	if (!err && (spec->flags & EGPU_F_RING_LOSSLESS))
		(*out)->wait_ns = RING_DEFAULT_WAIT_NS;
	return err;
}

int ring_set_wait(struct event_ring *r, uint64_t wait_ns)
{
	int err = 0;

	pthread_mutex_lock(&r->lock);
	if (!r->wait_ns)
		err = err_set(EGPU_EINVAL, "ring '%s' is not lossless (EGPU_F_RING_LOSSLESS)",
			      r->name);
	else if (r->dev_mem)
		err = err_set(EGPU_EBUSY, "ring '%s' is on the GPU already: set its wait before",
			      r->name);
	else
		r->wait_ns = wait_ns ? wait_ns : 1;
	pthread_mutex_unlock(&r->lock);
	return err;
}

bool ring_in_device_memory(const struct event_ring *r)
{
	return r->in_device_memory;
}

static void ring_unmap_gpu(struct event_ring *r)
{
	CUcontext cur = NULL;
	const struct cu_driver *d = cu();

	if (!d)
		return;
	/* The memory belongs to the context current when it was made. */
	if (d->cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur != r->cu_ctx)
		d->cuCtxSetCurrent(r->cu_ctx);
	if (r->dev)
		ring_dev_release(r);
	else
		d->cuMemHostUnregister(r->mem);
	if (cur != r->cu_ctx)
		d->cuCtxSetCurrent(cur);
}

void ring_free(struct event_ring *r)
{
	if (!r)
		return;
	if (r->dev_mem && (!r->dev || r->dev->owned))
		ring_unmap_gpu(r);
	ring_dev_free(r);
	munmap(r->mem, r->mem_len);
	pthread_mutex_destroy(&r->lock);
	ring_free_struct(r);
}

uint32_t ring_max_payload(const struct event_ring *r)
{
	return r->max_record - RING_HDR_SIZE;
}

/* @v: the ring's GPU side at @base; @dev: its records in GPU memory. */
static void fill_view(const struct event_ring *r, uint64_t base, bool dev,
		      struct dev_ring *v)
{
	uint64_t prod = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE);

	*v = (struct dev_ring){
		.reserved = prod,
		.prod = prod,
		.cons_seen = __atomic_load_n(&r->ctl->cons, __ATOMIC_ACQUIRE),
		.mask = r->cap - 1,
		.data = base + RING_DATA_OFFSET,
		.ctl = base,
		.max_record = r->max_record,
		.type = r->type,
		.shards = 1,
	};
	if (dev)
		ring_dev_view(r, base, v);
	if (r->wait_ns) {
		v->flags |= RING_LOSSLESS;
		v->wait_ns = r->wait_ns;
	}
}

void ring_host_view(const struct event_ring *r, struct dev_ring *view)
{
	fill_view(r, (uint64_t)(uintptr_t)r->mem, r->dev != NULL, view);
}

void ring_gpu_view(struct event_ring *r, uint64_t base, struct dev_ring *view)
{
	pthread_mutex_lock(&r->lock);
	fill_view(r, r->dev_mem ? r->dev_mem : base,
		  r->dev != NULL || r->in_device_memory, view);
	pthread_mutex_unlock(&r->lock);
}

/* Page-lock the storage and map it into the current context (lock held). */
static int ring_register(struct event_ring *r)
{
	const struct cu_driver *d;
	CUdeviceptr dptr;
	int err = cu_ctx_current((CUcontext *)&r->cu_ctx);

	d = cu();
	if (!err)
		err = cu_check(d->cuMemHostRegister(r->mem, r->mem_len,
					CU_MEMHOSTREGISTER_DEVICEMAP),
			       "cuMemHostRegister");
	if (!err) {
		err = cu_check(d->cuMemHostGetDevicePointer(&dptr, r->mem, 0),
			       "cuMemHostGetDevicePointer");
		if (err)
			d->cuMemHostUnregister(r->mem);
	}
	if (err) {
		err_prefix("ring '%s': mapping %zu bytes of host memory into the GPU",
			   r->name, r->mem_len);
		return err;
	}
	__atomic_store_n(&r->dev_mem, dptr, __ATOMIC_RELEASE);
	return 0;
}

int ring_map_gpu(struct event_ring *r, struct dev_ring *init)
{
	int err = 0;

	pthread_mutex_lock(&r->lock);
	if (!r->dev_mem)
		err = r->in_device_memory ? ring_dev_alloc(r) : ring_register(r);
	if (!err)
		fill_view(r, r->dev_mem, r->dev != NULL, init);
	pthread_mutex_unlock(&r->lock);
	return err;
}

int ring_dev_start(struct event_ring *r, uint64_t store, uint8_t *mirror,
		   size_t mirror_len, uint64_t *lines, struct dev_ring *init)
{
	int err;

	pthread_mutex_lock(&r->lock);
	err = r->dev_mem ? err_set(EGPU_EINVAL, "ring '%s' is on the GPU already",
				   r->name) :
	      ring_dev_setup(r, store, mirror, mirror_len, lines, false);
	if (!err)
		fill_view(r, r->dev_mem, r->dev != NULL, init);
	pthread_mutex_unlock(&r->lock);
	return err;
}

bool ring_on_gpu(const struct event_ring *r)
{
	return __atomic_load_n(&r->dev_mem, __ATOMIC_ACQUIRE) != 0;
}

int ring_claim(struct event_ring *r)
{
	if (__atomic_exchange_n(&r->claimed, true, __ATOMIC_ACQ_REL))
		return err_set(EGPU_EINVAL,
			       "ring '%s' is already consumed by another egpu_ringbuf",
			       r->name);
	return 0;
}

void ring_release(struct event_ring *r)
{
	__atomic_store_n(&r->claimed, false, __ATOMIC_RELEASE);
}

/* The CPU producers' drops, and the GPU's wherever they count them. */
uint64_t ring_drops(const struct event_ring *r)
{
	uint64_t drops = __atomic_load_n(&r->ctl->drops, __ATOMIC_ACQUIRE);

	return drops + ring_dev_drops(r);
}
