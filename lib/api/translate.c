/* SPDX-License-Identifier: MIT */
/*
 * Turning a program into code, the one place that does it: the program's
 * JIT input and map table (host storage for the CPU; GPU memory, or
 * placeholders offline, for the GPU), the JIT, and the device runtime
 * modules the translated PTX needs, chosen from what the JIT reports it
 * called. Translating launches and allocates nothing: it reads where the
 * maps live in GPU memory, where the caller moved them before
 * (obj_maps_to_gpu, gpu_maps.c).
 */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "core/tlocal.h"
#include "device/device.h"
#include "maps/layout.h"

/* An SM array's copies offline: an H100's 132 SMs rounded up. */
#define OFFLINE_SM_SLOTS 256

void prog_jit_input(const struct egpu_prog *prog, const struct jit_map *maps,
		    struct jit_input *in)
{
	*in = (struct jit_input){
		.name = prog->spec->name,
		.insns = prog->spec->insns,
		.insn_cnt = prog->spec->insn_cnt,
		.maps = maps,
		.map_cnt = prog->obj->spec.map_cnt,
		.helpers = prog->obj->abi,
		.users = prog->obj->users,
		.attach = prog->spec->attach,
		.never_stack = prog->never_stack,
	};
}

static struct jit_map jit_map_make(const struct map_spec *spec,
				   uint64_t addr, uint64_t value_addr)
{
	return (struct jit_map){
		.addr = addr,
		.value_addr = value_addr,
		.type = spec->type,
		.key_size = spec->key_size,
		.value_size = spec->value_size,
		.max_entries = spec->max_entries,
	};
}

/* CPU code reaches a ring map's ring, any other map's host storage. */
void obj_host_jit_maps(const struct egpu_obj *obj, struct jit_map *out)
{
	for (size_t i = 0; i < obj->spec.map_cnt; i++) {
		const struct egpu_map *m = &obj->maps[i];
		uint64_t addr = m->ring ? (uint64_t)(uintptr_t)m->ring :
				(uint64_t)(uintptr_t)m->host;

		out[i] = jit_map_make(m->spec, addr,
				      (uint64_t)(uintptr_t)host_map_array_base(m->host));
	}
}

/*
 * CPU code over the maps in GPU memory (egpu_run_opts.gpu_maps): the
 * struct dev_map of each, no inline array access (the CPU cannot address
 * GPU memory: host_gpu_maps.c copies). Ring maps keep their ring.
 */
int obj_host_gpu_jit_maps(struct egpu_obj *obj, struct jit_map *out)
{
	int err = obj_maps_to_gpu(obj);

	for (size_t i = 0; !err && i < obj->spec.map_cnt; i++) {
		const struct egpu_map *m = &obj->maps[i];
		uint64_t addr = m->ring ? (uint64_t)(uintptr_t)m->ring :
				(uint64_t)(uintptr_t)m->dev;

		out[i] = jit_map_make(m->spec, addr, 0);
	}
	return err;
}

/* Thread-local values are registers, named by placeholder addresses. */
static struct jit_map gpu_jit_map(const struct map_spec *spec,
				  uint64_t addr, uint64_t value_addr)
{
	struct jit_map m = jit_map_make(spec, addr,
					spec->type == EGPU_MAP_THREAD_LOCAL ?
					thread_local_base(addr) : value_addr);

	m.copy_stride = dev_map_sm_stride(spec->max_entries, spec->value_size);
	return m;
}

/* Inspection only: a recognisable, never-valid address for map @i. */
static uint64_t offline_addr(size_t i)
{
	return 0xdead000000000000ull + ((uint64_t)i << 32);
}

static void offline_jit_maps(const struct egpu_obj *obj, struct jit_map *maps)
{
	for (size_t i = 0; i < obj->spec.map_cnt; i++) {
		uint64_t fake = offline_addr(i);

		maps[i] = gpu_jit_map(&obj->spec.maps[i], fake, fake + 0x100);
		/* SM arrays as on a GPU of up to OFFLINE_SM_SLOTS SMs. */
		if (maps[i].type == EGPU_MAP_SM_ARRAY)
			maps[i].slots = OFFLINE_SM_SLOTS;
	}
}

int map_gpu_handle(struct egpu_map *m, uint64_t *handle)
{
	int err;

	if (m->obj->ctx->offline) {
		*handle = offline_addr((size_t)(m - m->obj->maps));
		return 0;
	}
	err = obj_maps_to_gpu(m->obj);
	if (!err)
		*handle = dev_map_handle(m->dev);
	return err;
}

int obj_gpu_jit_maps(const struct egpu_obj *obj, struct jit_map *maps)
{
	if (obj->ctx->offline) {
		offline_jit_maps(obj, maps);
		return 0;
	}
	for (size_t i = 0; i < obj->spec.map_cnt; i++) {
		const struct egpu_map *m = &obj->maps[i];

		if (!m->dev)
			return err_set(EGPU_EINVAL,
				       "object '%s': map '%s' is not in GPU memory yet (obj_maps_to_gpu)",
				       obj->name, m->spec->name);
		maps[i] = gpu_jit_map(m->spec, dev_map_handle(m->dev),
				      dev_map_value_base(m->dev));
		maps[i].slots = dev_map_threads(m->dev);
	}
	return 0;
}

int prog_ptx(struct egpu_prog *prog, const struct jit_map *maps,
	     const char *func, const char *sm, bool kernel,
	     struct prog_ptx_out *out)
{
	struct jit_input in;
	int err;

	prog_jit_input(prog, maps, &in);
	in.name = func;
	/* A probe was verified for its attach point, where every access
	 * is proven aligned; direct runs get memory of any alignment. */
	in.aligned = !kernel && prog->spec->attach != EGPU_ATTACH_NONE;
	err = jit_ptx(&in, sm, kernel, &out->ptx, &out->len, &out->needs);
	if (err)
		err_prefix("prog '%s'", prog->spec->name);
	return err;
}

int prog_gpu_ptx(struct egpu_prog *prog, const char *func, const char *sm,
		 bool kernel, struct prog_ptx_out *out)
{
	size_t n = prog->obj->spec.map_cnt;
	struct jit_map *maps = calloc(n ? n : 1, sizeof(*maps));
	int err;

	if (!maps)
		return err_set(EGPU_ENOMEM, "prog '%s': out of memory", prog->spec->name);
	err = obj_gpu_jit_maps(prog->obj, maps);
	if (err)
		err_prefix("prog '%s'", prog->spec->name);
	else
		err = prog_ptx(prog, maps, func, sm, kernel, out);
	free(maps);
	return err;
}

int runtime_modules(struct egpu_ctx *ctx, unsigned needs,
		    struct ptx_text out[RUNTIME_MODULES_MAX], size_t *nout)
{
	int err;

	*nout = 0;
	if (!(needs & JIT_NEED_RUNTIME))
		return 0;
	out[0] = (struct ptx_text){ .name = "device runtime",
				    .text = device_runtime_ptx,
				    .len = device_runtime_ptx_len };
	*nout = RUNTIME_MODULES_MAX;
	err = print_ring_module(ctx, needs & JIT_NEED_PRINT, &out[1]);
	return err ? err : call_ring_module(ctx, needs & JIT_NEED_CALL, &out[2]);
}

int prog_kernel_ptx(struct egpu_prog *prog, const char *func, const char *sm,
		    char **ptx)
{
	struct ptx_text rt[RUNTIME_MODULES_MAX];
	struct prog_ptx_out own = { 0 };
	struct strbuf sb;
	size_t nrt = 0;
	int err;

	*ptx = NULL;
	err = prog_gpu_ptx(prog, func, sm, true, &own);
	if (!err)
		err = runtime_modules(prog->obj->ctx, own.needs, rt, &nrt);
	if (err) {
		free(own.ptx);
		return err;
	}
	if (!nrt) {
		*ptx = own.ptx;
		return 0;
	}
	sb_init(&sb);
	err = ptx_instrument(own.ptx, own.len, NULL, 0, rt, nrt, &sb, NULL);
	free(own.ptx);
	*ptx = err ? NULL : sb_detach(&sb, NULL);
	sb_free(&sb);
	if (!err && !*ptx)
		err = err_set(EGPU_ENOMEM, "out of memory");
	return err;
}
