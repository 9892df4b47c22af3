/* SPDX-License-Identifier: MIT */
/*
 * Maps in GPU memory, host side: creation, and the key-value operations,
 * sent to the map's kind (dev_map_array.c, dev_map_hash.c) with its
 * context current. Copies: dev_map_copy.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maps/dev_map_impl.h"
#include "maps/ring.h"

static int check_spec(const struct map_spec *spec)
{
	/* A ring's data is its struct dev_ring, given as spec->init. */
	if (map_type_is_ring(spec->type))
		return spec->init && spec->init_len == sizeof(struct dev_ring) ? 0 :
		       err_set(EGPU_EINVAL, "map '%s': a ring needs its dev_ring",
			       spec->name);
	if (spec->type != EGPU_MAP_HASH && !map_type_is_array(spec->type))
		return err_set(EGPU_ENOTSUP,
			       "map '%s': type %u cannot live in GPU memory as a map",
			       spec->name, spec->type);
	if (!spec->key_size || !spec->value_size || !spec->max_entries)
		return err_set(EGPU_EINVAL,
			       "map '%s': key size %u, value size %u and max entries %u must not be 0",
			       spec->name, spec->key_size, spec->value_size,
			       spec->max_entries);
	if (map_type_is_array(spec->type) && spec->key_size != 4)
		return err_set(EGPU_EINVAL,
			       "map '%s': array keys are 4-byte indices, not %u bytes",
			       spec->name, spec->key_size);
	if (spec->type == EGPU_MAP_HASH &&
	    (spec->max_entries > (UINT32_MAX - 1) / 2 ||
	     (uint64_t)spec->key_size + spec->value_size > UINT32_MAX / 2))
		return err_set(EGPU_E2BIG,
			       "map '%s': hash map too large (%u entries of %u + %u bytes)",
			       spec->name, spec->max_entries, spec->key_size,
			       spec->value_size);
	return 0;
}

static uint32_t default_threads(const struct map_spec *spec)
{
	uint64_t per_thread = (uint64_t)spec->value_size * spec->max_entries;
	uint32_t t = DEV_MAP_THREADS_MAX;

	/* t * per_thread > bound, without overflow */
	while (t > 1 && t > DEV_MAP_THREADS_BYTES / per_thread)
		t >>= 1;
	return t;
}

static int choose_threads(const struct map_spec *spec, uint32_t threads,
			  uint32_t *out)
{
	if (!map_type_per_thread(spec->type))
		threads = 1;
	else if (!threads)
		threads = default_threads(spec);
	else if (threads & (threads - 1))
		return err_set(EGPU_EINVAL,
			       "map '%s': per-thread slots %u is not a power of two",
			       spec->name, threads);
	*out = threads;
	return 0;
}

/* Fill the descriptor (but data) and compute the data's size. */
static int describe(const struct map_spec *spec, uint32_t threads,
		    struct dev_map_desc *d, uint64_t *bytes)
{
	uint64_t n;

	*d = (struct dev_map_desc){
		.type = spec->type,
		.key_size = spec->key_size,
		.value_size = spec->value_size,
		.max_entries = spec->max_entries,
		.threads = threads,
	};
	if (map_type_is_ring(spec->type)) {
		*bytes = sizeof(struct dev_ring);
		return 0;
	}
	if (spec->type == EGPU_MAP_HASH) {
		d->slot_cnt = 2 * spec->max_entries + 1; /* at most half full */
		d->slot_size = dev_slot_size(spec->key_size, spec->value_size);
		*bytes = (uint64_t)d->slot_cnt * d->slot_size;
		return 0;
	}
	if (__builtin_mul_overflow(spec->type == EGPU_MAP_SM_ARRAY ?
				   dev_map_sm_stride(spec->max_entries, spec->value_size) :
				   (uint64_t)spec->max_entries * spec->value_size,
				   (uint64_t)threads, &n) ||
	    n > UINT64_MAX - DEV_MAP_DATA_OFFSET)
		return err_set(EGPU_E2BIG,
			       "map '%s': %u entries x %u threads x %u bytes overflows",
			       spec->name, spec->max_entries, threads,
			       spec->value_size);
	*bytes = n;
	return 0;
}

/* bpftime's host maps (1512, 1513): page-locked, mapped into the GPU. */
static int alloc_host(struct dev_map *m, uint64_t total)
{
	const struct cu_driver *d = cu();
	void *host = NULL;
	int err;

	err = cu_check(d->cuMemAllocHost(&host, total), "cuMemAllocHost");
	if (err)
		return err;
	m->host = host;
	memset(host, 0, total);
	return cu_check(d->cuMemHostGetDevicePointer(&m->base, host, 0),
			"cuMemHostGetDevicePointer");
}

/* A map larger than the GPU's free memory is refused before allocating. */
static int fits_gpu(uint64_t total)
{
	size_t free_b = 0, all_b = 0;
	int err = cu_check(cu()->cuMemGetInfo(&free_b, &all_b), "cuMemGetInfo");

	if (err || total <= free_b)
		return err;
	/* alloc_and_fill() names the map and the size */
	return err_set(EGPU_ENOMEM, "only %zu bytes free (of %zu)", free_b,
		       all_b);
}

/*
 * Zeroed on the map's own stream, waited for, as its later copies go: a
 * memset on the legacy stream could still run after them.
 */
static int alloc_dev(struct dev_map *m, uint64_t total)
{
	int err = fits_gpu(total);

	if (!err)
		err = cu_alloc_stable(&m->base, total);
	if (!err && (dev_map_zero_async(m, 0, m->base, total) ||
		     dev_map_sync(m, 0)))
		err = EGPU_ECUDA;
	return err;
}

static int alloc_and_fill(struct dev_map *m, const struct map_spec *spec,
			  uint64_t bytes)
{
	uint64_t total = DEV_MAP_DATA_OFFSET + bytes;
	int err;

	err = spec->host_memory ? alloc_host(m, total) : alloc_dev(m, total);
	if (err) {
		err_prefix("map '%s': %llu bytes of %s memory", spec->name,
			   (unsigned long long)total,
			   spec->host_memory ? "page-locked host" : "GPU");
		return err;
	}
	m->desc.data = m->base + DEV_MAP_DATA_OFFSET;
	if (dev_map_htod(m, 0, &m->desc, sizeof(m->desc)))
		return EGPU_ECUDA;
	/* Global data (.data, .rodata) starts with its initial bytes, a
	 * ring with its struct dev_ring. */
	if (spec->init && (spec->type == EGPU_MAP_ARRAY ||
			   spec->type == EGPU_MAP_GPU_ARRAY ||
			   map_type_is_ring(spec->type)) &&
	    dev_map_htod(m, DEV_MAP_DATA_OFFSET, spec->init,
			 spec->init_len < bytes ? spec->init_len : bytes))
		return EGPU_ECUDA;
	return 0;
}

int dev_map_new(const struct map_spec *spec, uint32_t threads,
		struct dev_map **out)
{
	struct dev_map *m;
	uint64_t bytes = 0;
	int err;

	err = check_spec(spec);
	if (!err)
		err = choose_threads(spec, threads, &threads);
	if (err)
		return err;
	m = calloc(1, sizeof(*m));
	if (!m || !(m->name = strdup(spec->name))) {
		free(m);
		return err_set(EGPU_ENOMEM, "map '%s': out of memory", spec->name);
	}
	for (uint32_t c = 0; c < DEV_MAP_CHANNELS; c++)
		pthread_mutex_init(&m->io[c].lock, NULL);
	err = describe(spec, threads, &m->desc, &bytes);
	if (!err && (err = cu_ctx_current(&m->ctx)))
		err_prefix("map '%s'", spec->name);
	if (!err)
		err = alloc_and_fill(m, spec, bytes);
	if (err) {
		dev_map_free(m);
		return err;
	}
	*out = m;
	return 0;
}

void dev_map_free(struct dev_map *m)
{
	const struct cu_driver *d;
	CUcontext prev;

	if (!m)
		return;
	if ((m->base || m->host || m->io[0].stream) &&
	    !dev_map_enter(m, &prev)) {
		d = cu();
		for (uint32_t c = 0; c < DEV_MAP_CHANNELS; c++) {
			if (m->io[c].stream)
				d->cuStreamDestroy(m->io[c].stream);
			if (m->io[c].stage)
				d->cuMemFreeHost(m->io[c].stage);
			if (m->io[c].zeros)
				d->cuMemFreeHost(m->io[c].zeros);
		}
		if (m->host)
			d->cuMemFreeHost(m->host);
		else
			cu_free_stable(m->base);
		dev_map_leave(m, prev);
	}
	for (uint32_t c = 0; c < DEV_MAP_CHANNELS; c++)
		pthread_mutex_destroy(&m->io[c].lock);
	free(m->name);
	free(m);
}

uint64_t dev_map_handle(const struct dev_map *m)
{
	return m->base;
}

uint64_t dev_map_value_base(const struct dev_map *m)
{
	return map_type_is_array(m->desc.type) ? m->desc.data : 0;
}

uint64_t dev_map_data(const struct dev_map *m)
{
	return m->desc.data;
}

uint32_t dev_map_threads(const struct dev_map *m)
{
	return m->desc.threads;
}

void dev_map_sizes(const struct dev_map *m, uint32_t *key_size,
		   uint32_t *value_size)
{
	*key_size = m->desc.key_size;
	*value_size = m->desc.value_size;
}

/*
 * Operation @op on map @m, with its context current. Rings have no keys;
 * arrays no delete.
 */
static int kv_call(struct dev_map *m, enum kv_op op, const struct kv_args *a)
{
	kv_fn *fn = (m->desc.type == EGPU_MAP_HASH ? dev_hash_ops :
						     dev_array_ops)[op];
	CUcontext prev;
	int err;

	if (map_type_is_ring(m->desc.type))
		return -EOPNOTSUPP;
	if (!fn || (op == KV_UPDATE && a->flags > EGPU_EXIST))
		return -EINVAL;
	err = dev_map_enter(m, &prev);
	if (err)
		return err;
	err = fn(m, a);
	dev_map_leave(m, prev);
	return err;
}

int dev_map_lookup(struct dev_map *m, const void *key, void *value)
{
	return kv_call(m, KV_LOOKUP, &(struct kv_args){ .key = key, .out = value });
}

int dev_map_update(struct dev_map *m, const void *key, const void *value,
		   uint64_t flags)
{
	return kv_call(m, KV_UPDATE, &(struct kv_args){ .key = key, .in = value,
							.flags = flags });
}

int dev_map_delete(struct dev_map *m, const void *key)
{
	return kv_call(m, KV_DELETE, &(struct kv_args){ .key = key });
}

int dev_map_next_key(struct dev_map *m, const void *key, void *next)
{
	return kv_call(m, KV_NEXT_KEY, &(struct kv_args){ .key = key, .out = next });
}
