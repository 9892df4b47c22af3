/* SPDX-License-Identifier: MIT */
/*
 * Binding a context to its CUDA context and moving an object's maps to GPU
 * memory: a step of its own, taken by every entry point that makes code
 * for the GPU (instrumenting, egpu_prog_jit_ptx, GPU runs) before it
 * translates. Maps are allocated in the CUDA context current at the first
 * GPU use and stay there; programs reach them at constant addresses
 * (translate.c reads them and bakes them in), so a context's PTX is only
 * valid in that CUcontext.
 */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "cuda/cu.h"

int ctx_bind_cuda(struct egpu_ctx *ctx)
{
	CUcontext cur;
	int err = cu_ctx_current(&cur);

	if (err)
		return err;
	if (!ctx->cu_ctx)
		ctx->cu_ctx = cur;
	else if (ctx->cu_ctx != (void *)cur)
		return err_set(EGPU_EINVAL,
			       "maps of this egpu context live in another CUDA context; make that one current");
	return 0;
}

/* Insert every entry of the host hash map into its new GPU copy. */
static int hash_copy_to_gpu(struct egpu_map *m)
{
	size_t ks = m->spec->key_size;
	uint8_t *buf = malloc(2 * ks), *key = buf, *prev = NULL;
	long res = 0;

	if (!buf)
		return err_set(EGPU_ENOMEM, "out of memory");
	/* The current and the previous key take turns in the two halves. */
	while (!res && !host_map_next_key(m->host, prev, key)) {
		res = dev_map_update(m->dev, key, host_map_lookup(m->host, key),
				     EGPU_ANY);
		prev = key;
		key = key == buf ? buf + ks : buf;
	}
	free(buf);
	if (res)
		return err_set(EGPU_ECUDA, "copying entries to the GPU failed (%ld)", res);
	return 0;
}

/* An SM array's copies: the SM count rounded up to a power of two. */
static int sm_slots(uint32_t *slots)
{
	int sms, err = cu_device_sm_count(&sms);

	*slots = 1;
	while (!err && *slots < (uint32_t)sms)
		*slots <<= 1;
	return err;
}

/*
 * Copy what the host stored so far (host API, CPU runs) into the new GPU
 * map: array values travel as the initial bytes, hash entries one by one.
 * Per-thread maps start at zero: their host copy has a single thread.
 */
static int map_move_to_gpu(struct egpu_map *m, uint32_t threads)
{
	struct map_spec spec = *m->spec;
	struct dev_ring ring;
	int err;

	/* A ring's records stay in host memory, mapped into the GPU, or
	 * move to GPU memory (EGPU_F_RING_DEVICE); the map's GPU data is the
	 * ring's device side, and its copies drain a ring in GPU memory. */
	if (m->ring) {
		err = ring_map_gpu(m->ring, &ring);
		spec.init = &ring;
		spec.init_len = sizeof(ring);
		if (!err)
			err = dev_map_new(&spec, threads, &m->dev);
		if (!err)
			ring_bind_map(m->ring, m->dev);
		return err;
	}
	if (spec.type == EGPU_MAP_SM_ARRAY) {
		err = sm_slots(&threads);
		if (err)
			return err;
	} else if (map_type_is_array(spec.type) &&
		   !map_type_per_thread(spec.type)) {
		spec.init = host_map_array_base(m->host);
		spec.init_len = (size_t)spec.max_entries * spec.value_size;
	}
	err = dev_map_new(&spec, threads, &m->dev);
	if (!err && spec.type == EGPU_MAP_HASH)
		err = hash_copy_to_gpu(m);
	return err;
}

static int obj_alloc_dev_maps(struct egpu_obj *obj)
{
	for (size_t i = 0; i < obj->spec.map_cnt; i++) {
		struct egpu_map *m = &obj->maps[i];
		int err;

		if (m->dev)
			continue;
		err = map_move_to_gpu(m, obj->ctx->thread_slots);
		if (err) {
			err_prefix("object '%s': map '%s'", obj->name, m->spec->name);
			return err;
		}
	}
	return 0;
}

int obj_maps_to_gpu(struct egpu_obj *obj)
{
	int err;

	if (!obj->spec.map_cnt || obj->ctx->offline)
		return 0;
	err = ctx_bind_cuda(obj->ctx);
	return err ? err : obj_alloc_dev_maps(obj);
}

int ctx_maps_to_gpu(struct egpu_ctx *ctx)
{
	for (struct egpu_link *l = ctx->links; l; l = l->next) {
		int err = obj_maps_to_gpu(l->prog->obj);

		if (err) {
			err_prefix("prog '%s'", l->prog->spec->name);
			return err;
		}
	}
	return 0;
}
