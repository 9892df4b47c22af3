/* SPDX-License-Identifier: MIT */
/*
 * Binding an object's maps to GPU memory. Maps are allocated in the CUDA
 * context current at the first GPU use and stay there; programs reach them
 * at constant addresses, so a context's PTX is only valid in that CUcontext.
 */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "core/tlocal.h"
#include "cuda/cu.h"

int ctx_bind_cuda(struct egpu_ctx *ctx)
{
	CUcontext cur;
	int err = cu_ctx_current(&cur);

	if (err)
		return err;
	if (!ctx->cu_ctx) {
		ctx->cu_ctx = cur;
		clock_ctx_start(ctx);
	} else if (ctx->cu_ctx != (void *)cur)
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
		res = dev_map_update(m->dev, key, map_host_lookup(m->host, key),
				     EGPU_ANY);
		prev = key;
		key = key == buf ? buf + ks : buf;
	}
	free(buf);
	if (res)
		return err_set(EGPU_ECUDA, "copying entries to the GPU failed (%ld)", res);
	return 0;
}

/* An SM array's copies offline: an H100's 132 SMs rounded up. */
#define OFFLINE_SM_SLOTS 256

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
	struct bpf_map_spec spec = *m->spec;
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

/* Thread-local values are registers, named by placeholder addresses. */
static struct jit_map gpu_jit_map(const struct bpf_map_spec *spec,
				  uint64_t addr, uint64_t value_addr)
{
	return jit_map_make(spec, addr, spec->type == EGPU_MAP_THREAD_LOCAL ?
					thread_local_base(addr) : value_addr);
}

int obj_gpu_maps(struct egpu_obj *obj, struct jit_map *maps)
{
	int err;

	if (obj->ctx->offline) {
		/* Inspection only: recognisable, never-valid addresses. */
		for (size_t i = 0; i < obj->spec.map_cnt; i++) {
			uint64_t fake = 0xdead000000000000ull + ((uint64_t)i << 32);

			maps[i] = gpu_jit_map(&obj->spec.maps[i], fake, fake + 0x100);
			/* SM arrays as on a GPU of up to OFFLINE_SM_SLOTS SMs. */
			if (maps[i].type == EGPU_MAP_SM_ARRAY)
				maps[i].slots = OFFLINE_SM_SLOTS;
		}
		return 0;
	}
	if (!obj->spec.map_cnt)
		return 0;
	err = ctx_bind_cuda(obj->ctx);
	if (!err)
		err = obj_alloc_dev_maps(obj);
	for (size_t i = 0; !err && i < obj->spec.map_cnt; i++) {
		const struct egpu_map *m = &obj->maps[i];

		maps[i] = gpu_jit_map(m->spec, dev_map_handle(m->dev),
				      dev_map_value_base(m->dev));
		maps[i].slots = dev_map_threads(m->dev);
	}
	return err;
}

int prog_gpu_ptx(struct egpu_prog *prog, const char *func, const char *sm,
		 bool kernel, char **ptx, size_t *len)
{
	size_t n = prog->obj->spec.map_cnt;
	struct jit_map *maps = calloc(n ? n : 1, sizeof(*maps));
	struct jit_input in;
	int err;

	if (!maps)
		return err_set(EGPU_ENOMEM, "prog '%s': out of memory", prog->spec->name);
	err = obj_gpu_maps(prog->obj, maps);
	if (!err) {
		prog_jit_input(prog, maps, &in);
		in.name = func;
		/* A probe was verified for its attach point, where every access
		 * is proven aligned; direct runs get memory of any alignment. */
		in.aligned = !kernel && prog->spec->attach != EGPU_ATTACH_NONE;
		err = jit_ptx(&in, sm, kernel, ptx, len);
	}
	free(maps);
	if (err)
		err_prefix("prog '%s'", prog->spec->name);
	return err;
}

int prog_kernel_ptx(struct egpu_prog *prog, const char *func, const char *sm,
		    char **ptx)
{
	struct ptx_text code = { .name = prog->spec->name };
	struct ptx_text rt[RUNTIME_MODULES_MAX];
	struct strbuf sb;
	char *own = NULL;
	size_t nrt = 0;
	int err;

	*ptx = NULL;
	err = prog_gpu_ptx(prog, func, sm, true, &own, &code.len);
	code.text = own;
	if (!err)
		err = runtime_modules(prog->obj->ctx, &code, 1, rt, &nrt);
	if (err) {
		free(own);
		return err;
	}
	if (!nrt) {
		*ptx = own;
		return 0;
	}
	sb_init(&sb);
	err = ptx_instrument(own, code.len, NULL, 0, rt, nrt, &sb, NULL);
	free(own);
	*ptx = err ? NULL : sb_detach(&sb, NULL);
	sb_free(&sb);
	if (!err && !*ptx)
		err = err_set(EGPU_ENOMEM, "out of memory");
	return err;
}
