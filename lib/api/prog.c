/* SPDX-License-Identifier: MIT */
/* Program accessors, translation to PTX and direct runs on the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"

const char *egpu_attach_point_str(enum egpu_attach_point at)
{
	static const char *const names[] = { "none", "entry", "exit", "mem" };

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

/* Host maps stand in for device ones until the context binds a GPU. */
static struct jit_map *prog_host_maps(const struct egpu_prog *prog)
{
	size_t n = prog->obj->spec.map_cnt;
	struct jit_map *maps = calloc(n ? n : 1, sizeof(*maps));

	if (!maps)
		err_set(EGPU_ENOMEM, "prog '%s': out of memory", prog->spec->name);
	else
		obj_host_jit_maps(prog->obj, maps);
	return maps;
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

static int prog_host_code(struct egpu_prog *prog, struct jit_host **out)
{
	struct jit_input in;
	struct jit_map *maps;
	int err = 0;

	pthread_mutex_lock(&prog->lock);
	if (!prog->host) {
		maps = prog_host_maps(prog);
		if (!maps) {
			err = EGPU_ENOMEM;
		} else {
			prog_jit_input(prog, maps, &in);
			err = jit_host_new(&in, &prog->host);
			free(maps);
			if (err)
				err_prefix("prog '%s'", prog->spec->name);
		}
	}
	*out = prog->host;
	pthread_mutex_unlock(&prog->lock);
	return err;
}

int egpu_prog_run(egpu_prog *prog, struct egpu_run_opts *opts)
{
	struct jit_host *host;
	uint64_t t0, r0;
	int err;

	if (!prog || !opts)
		return err_set(EGPU_EINVAL, "egpu_prog_run: NULL argument");
	if (OPTS_VALID(opts, egpu_run_opts, "egpu_prog_run"))
		return EGPU_EINVAL;
	if (OPTS_GET(opts, ctx_len, 0) && !OPTS_GET(opts, ctx, NULL))
		return err_set(EGPU_EINVAL, "egpu_prog_run: ctx_len without ctx");
	err = direct_ctx_ok(prog, OPTS_GET(opts, ctx_len, 0));
	if (!err)
		err = prog_verify(prog, EGPU_ATTACH_NONE, OPTS_GET(opts, ctx_len, 0));
	if (err)
		return err;
	if (OPTS_GET(opts, backend, EGPU_BACKEND_CPU) == EGPU_BACKEND_GPU)
		return prog_run_gpu(prog, opts);
	err = prog_host_code(prog, &host);
	if (err)
		return err;
	t0 = now_ns();
	r0 = jit_host_call(host, OPTS_GET(opts, ctx, NULL),
			   OPTS_GET(opts, ctx_len, 0));
	OPTS_SET(opts, run_ns, (double)(now_ns() - t0));
	OPTS_SET(opts, retval, r0);
	return 0;
}
