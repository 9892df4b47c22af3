/* SPDX-License-Identifier: MIT */
/*
 * Binding an object's maps to GPU memory. Maps are allocated in the CUDA
 * context current at the first GPU use and stay there; programs reach them
 * at constant addresses, so a context's PTX is only valid in that CUcontext.
 */
#include <stdlib.h>

#include "api/internal.h"
#include "cuda/cu.h"

static int ctx_bind_cuda(struct egpu_ctx *ctx)
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

static int obj_alloc_dev_maps(struct egpu_obj *obj)
{
	for (size_t i = 0; i < obj->spec.map_cnt; i++) {
		struct egpu_map *m = &obj->maps[i];
		int err;

		if (m->dev)
			continue;
		err = dev_map_new(m->spec, obj->ctx->thread_slots, &m->dev);
		if (err) {
			err_prefix("object '%s': map '%s'", obj->name, m->spec->name);
			return err;
		}
	}
	return 0;
}

int obj_gpu_maps(struct egpu_obj *obj, struct jit_map *maps)
{
	int err;

	if (obj->ctx->offline) {
		/* Inspection only: recognisable, never-valid addresses. */
		for (size_t i = 0; i < obj->spec.map_cnt; i++) {
			uint64_t fake = 0xdead000000000000ull + ((uint64_t)i << 32);

			maps[i] = jit_map_make(&obj->spec.maps[i], fake, fake + 0x100);
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

		maps[i] = jit_map_make(m->spec, dev_map_handle(m->dev),
				       dev_map_value_base(m->dev));
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
		err = jit_ptx(&in, sm, kernel, ptx, len);
	}
	free(maps);
	if (err)
		err_prefix("prog '%s'", prog->spec->name);
	return err;
}
