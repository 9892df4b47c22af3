/* SPDX-License-Identifier: MIT */
/* Program accessors, translation to PTX and direct runs on the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "egpu/ctx.h"

const char *egpu_attach_point_str(enum egpu_attach_point at)
{
	static const char *const names[] = { "none", "entry", "exit", "mem",
					     "uprobe", "uretprobe" };

	return (unsigned)at < ARRAY_SIZE(names) ? names[at] : "unknown";
}

const char *egpu_prog_name(const egpu_prog *prog)
{
	return prog ? prog->spec->name : "";
}

const char *egpu_prog_section(const egpu_prog *prog)
{
	return prog ? prog->spec->section : "";
}

enum egpu_attach_point egpu_prog_attach_point(const egpu_prog *prog)
{
	return prog ? (enum egpu_attach_point)prog->spec->attach : EGPU_ATTACH_NONE;
}

const char *egpu_prog_kernel(const egpu_prog *prog)
{
	return prog ? prog->spec->kernel : "";
}

size_t egpu_prog_insn_cnt(const egpu_prog *prog)
{
	return prog ? prog->spec->insn_cnt : 0;
}

const void *egpu_prog_insns(const egpu_prog *prog)
{
	return prog ? prog->spec->insns : NULL;
}

/* The verifier reasons about 32-bit sizes of direct-run memory. */
static int direct_ctx_ok(const struct egpu_prog *prog, size_t len)
{
	if (len > UINT32_MAX)
		return err_set(EGPU_E2BIG, "prog '%s': %zu bytes of memory; at most 4 GiB",
			       prog->spec->name, len);
	return 0;
}

int egpu_prog_jit_ptx(egpu_prog *prog, struct egpu_jit_opts *opts, char **ptx,
		      size_t *len)
{
	struct prog_ptx_out out = { 0 };
	const char *sm, *func;
	char fname[256];
	uint64_t t0;
	int err;

	if (!prog || !ptx)
		return err_set(EGPU_EINVAL, "egpu_prog_jit_ptx: NULL argument");
	if (OPTS_VALID(opts, egpu_jit_opts, "egpu_prog_jit_ptx"))
		return EGPU_EINVAL;
	sm = OPTS_GET(opts, sm, NULL);
	func = OPTS_GET(opts, func, NULL);
	if (!func) {
		snprintf(fname, sizeof(fname), "egpu_prog_%s", prog->spec->name);
		func = fname;
	}
	err = direct_ctx_ok(prog, OPTS_GET(opts, ctx_len, 0));
	if (!err)
		err = prog_verify(prog, prog->spec->attach, OPTS_GET(opts, ctx_len, 0));
	if (!err && (err = obj_maps_to_gpu(prog->obj)))
		err_prefix("prog '%s'", prog->spec->name);
	if (err)
		return err;
	t0 = now_ns();
	err = prog_gpu_ptx(prog, func, sm ? sm : prog->obj->ctx->sm,
			   OPTS_GET(opts, kernel, false), &out);
	OPTS_SET(opts, jit_ms, (double)(now_ns() - t0) / 1e6);
	*ptx = out.ptx;
	if (!err && len)
		*len = out.len;
	return err;
}

/* The map table of host code: host storage, or (@gpu) the GPU maps. */
static struct jit_map *prog_host_maps(struct egpu_prog *prog, bool gpu)
{
	size_t n = prog->obj->spec.map_cnt;
	struct jit_map *maps = calloc(n ? n : 1, sizeof(*maps));

	if (!maps) {
		err_set(EGPU_ENOMEM, "prog '%s': out of memory", prog->spec->name);
		return NULL;
	}
	if (!gpu) {
		obj_host_jit_maps(prog->obj, maps);
	} else if (obj_host_gpu_jit_maps(prog->obj, maps)) {
		free(maps);
		return NULL;
	}
	return maps;
}

/* Host code of @prog, made at the first run (@gpu: over the GPU maps). */
static int prog_host_code(struct egpu_prog *prog, bool gpu,
			  struct jit_host **out)
{
	struct jit_host **code = gpu ? &prog->host_gpu : &prog->host;
	struct jit_input in;
	struct jit_map *maps;
	int err = 0;

	pthread_mutex_lock(&prog->lock);
	if (!*code) {
		maps = prog_host_maps(prog, gpu);
		if (!maps) {
			err = egpu_errcode();
		} else {
			prog_jit_input(prog, maps, &in);
			in.gpu_maps = gpu;
			err = jit_host_new(&in, code);
			free(maps);
		}
		if (err)
			err_prefix("prog '%s'", prog->spec->name);
	}
	*out = *code;
	pthread_mutex_unlock(&prog->lock);
	return err;
}

/*
 * Host probes run at their own attach point (struct egpu_pt_regs at r1);
 * anything else as a direct run over @opts' memory.
 */
static int run_verify(struct egpu_prog *prog, size_t ctx_len)
{
	int at = prog->spec->attach;

	if (!attach_is_host(at))
		return prog_verify(prog, EGPU_ATTACH_NONE, (uint32_t)ctx_len);
	if (ctx_len != sizeof(struct egpu_pt_regs))
		return err_set(EGPU_EINVAL,
			       "prog '%s' is a %s: ctx must be a struct egpu_pt_regs (%zu bytes), got %zu",
			       prog->spec->name, egpu_attach_point_str(at),
			       sizeof(struct egpu_pt_regs), ctx_len);
	return prog_verify(prog, at, 0);
}

/* The GPU timer's offset to CLOCK_MONOTONIC, 0 if it cannot be had. */
static int64_t gpu_timer_offset(struct egpu_ctx *ctx)
{
	EGPU_OPTS(egpu_clock, clk);

	return egpu_clock_get(ctx, &clk) ? 0 : clk.offset_ns;
}

/* Run on the CPU with r1 = @ctx, r2 = @len. */
static int host_run(egpu_prog *prog, struct egpu_run_opts *opts, void *ctx,
		    uint64_t len)
{
	bool gpu = OPTS_GET(opts, gpu_maps, false);
	uint64_t t0, r0;
	struct jit_host *host;
	int64_t offset;
	int err;

	err = prog_host_code(prog, gpu, &host);
	if (err)
		return err;
	if (!gpu) {
		t0 = now_ns();
		r0 = jit_host_call(host, ctx, len);
	} else {
		offset = gpu_timer_offset(prog->obj->ctx);
		t0 = now_ns();
		err = jit_host_call_gpu(host, ctx, len, offset, &r0);
		if (err)
			err = err_set(EGPU_ECUDA, "prog '%s': writing a map value back to the GPU: %s",
				      prog->spec->name, strerror(-err));
	}
	OPTS_SET(opts, run_ns, (double)(now_ns() - t0));
	OPTS_SET(opts, retval, r0);
	return err;
}

/*
 * The context an entry or exit probe sees in its kernel, made from the
 * parameter bytes of @opts: r1 = @kc, r2 = its size.
 */
static int probe_ctx(const struct egpu_prog *prog,
		     const struct egpu_run_opts *opts, struct egpu_kernel_ctx *kc)
{
	const char *name = prog->spec->name;
	const void *params = OPTS_GET(opts, params, NULL);
	size_t len = OPTS_GET(opts, params_len, 0);

	if (prog->spec->attach != EGPU_ATTACH_ENTRY &&
	    prog->spec->attach != EGPU_ATTACH_EXIT)
		return err_set(EGPU_EINVAL, "prog '%s': params are for entry and exit probes; give a %s its memory as ctx",
			       name, prog->spec->attach == EGPU_ATTACH_MEM ?
			       "memory probe (a struct egpu_mem_ctx)" :
			       "direct run");
	if (OPTS_GET(opts, backend, EGPU_BACKEND_CPU) != EGPU_BACKEND_CPU)
		return err_set(EGPU_ENOTSUP, "prog '%s': probes run on the CPU here; on a GPU they run inside kernels (egpu_attach_kernel)",
			       name);
	if (OPTS_GET(opts, ctx, NULL) || OPTS_GET(opts, ctx_len, 0))
		return err_set(EGPU_EINVAL, "prog '%s': give either params (the probe's ctx is made from them) or ctx, not both",
			       name);
	if (len && !params)
		return err_set(EGPU_EINVAL, "egpu_prog_run: params_len without params");
	if (len > UINT32_MAX)
		return err_set(EGPU_E2BIG, "prog '%s': %zu parameter bytes; at most 4 GiB",
			       name, len);
	if (len < prog->params_reach)
		return err_set(EGPU_EINVAL, "prog '%s' reads ctx->params up to byte %u; %zu parameter bytes given",
			       name, prog->params_reach, len);
	*kc = (struct egpu_kernel_ctx){
		.params = (uint64_t)(uintptr_t)params,
		.params_size = (uint32_t)len,
		.attach = prog->spec->attach == EGPU_ATTACH_ENTRY ?
			EGPU_CTX_ENTRY : EGPU_CTX_EXIT,
	};
	return 0;
}

/*
 * Whether @opts asks for a probe's run from parameter bytes: params given,
 * or an entry or exit probe given no memory of its own. Otherwise the
 * program runs directly on ctx (any program: a probe's own struct as ctx
 * too, verified for that many bytes).
 */
static bool runs_from_params(const struct egpu_prog *prog,
			     const struct egpu_run_opts *opts)
{
	enum egpu_attach_point at = prog->spec->attach;

	if (OPTS_GET(opts, params, NULL) || OPTS_GET(opts, params_len, 0))
		return true;
	return (at == EGPU_ATTACH_ENTRY || at == EGPU_ATTACH_EXIT) &&
	       !OPTS_GET(opts, ctx, NULL) && !OPTS_GET(opts, ctx_len, 0);
}

/* r1 and r2 of a direct run: @opts' memory, checked and verified for. */
static int direct_memory(struct egpu_prog *prog,
			 const struct egpu_run_opts *opts)
{
	size_t len = OPTS_GET(opts, ctx_len, 0);
	int err;

	if (len && !OPTS_GET(opts, ctx, NULL))
		return err_set(EGPU_EINVAL, "egpu_prog_run: ctx_len without ctx");
	err = direct_ctx_ok(prog, len);
	return err ? err : run_verify(prog, len);
}

int egpu_prog_run(egpu_prog *prog, struct egpu_run_opts *opts)
{
	struct egpu_kernel_ctx kc;
	void *mem;
	size_t len;
	int err;

	if (!prog || !opts)
		return err_set(EGPU_EINVAL, "egpu_prog_run: NULL argument");
	if (OPTS_VALID(opts, egpu_run_opts, "egpu_prog_run"))
		return EGPU_EINVAL;
	if (!runs_from_params(prog, opts)) {
		err = direct_memory(prog, opts);
		mem = OPTS_GET(opts, ctx, NULL);
		len = OPTS_GET(opts, ctx_len, 0);
	} else {
		err = probe_ctx(prog, opts, &kc);
		if (!err)
			err = prog_verify(prog, prog->spec->attach, 0);
		mem = &kc;
		len = sizeof(kc);
	}
	if (err)
		return err;
	if (OPTS_GET(opts, backend, EGPU_BACKEND_CPU) == EGPU_BACKEND_GPU) {
		if (attach_is_host(prog->spec->attach))
			return err_set(EGPU_EINVAL, "prog '%s' is a host probe: it runs on the CPU back end",
				       prog->spec->name);
		return prog_run_gpu(prog, opts);
	}
	return host_run(prog, opts, mem, len);
}
