/* SPDX-License-Identifier: MIT */
/*
 * egpu_ptx_link() and the load of an instrumented module: a module whose
 * traced sites call the device runtime (the splicer's trace mode) is cut
 * in two (ptx/split.c) and linked by the driver (cuda/cu_link.c), the
 * runtime compiled apart with a register limit of its own, so that its
 * rare calls no longer set the kernels' registers (docs/events.md, "The
 * runtime compiled apart"). Any other module loads as one, as before.
 */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "cuda/cu.h"

static int link_split(const char *ptx, unsigned regs, const struct cu_jit *jit,
		      void **cubin, size_t *size)
{
	struct strbuf app, rt;
	CUcontext cur;
	int err;

	sb_init(&app);
	sb_init(&rt);
	err = ptx_split_runtime(ptx, strlen(ptx), &app, &rt);
	if (!err) {
		ptx_trace_caps_lower(app.buf, cu_jit_max_regs(jit));
		err = cu_ctx_current(&cur);
	}
	if (!err)
		err = cu_link_ptx(app.buf, rt.buf, regs, jit, cubin, size);
	sb_free(&app);
	sb_free(&rt);
	return err;
}

int egpu_ptx_link(egpu_ctx *ctx, const char *ptx,
		  const struct egpu_ptx_link_opts *opts, void **cubin,
		  size_t *size)
{
	struct cu_jit jit;
	unsigned regs;
	int err;

	if (!ctx || !ptx || !cubin || !size)
		return err_set(EGPU_EINVAL, "egpu_ptx_link: NULL argument");
	*cubin = NULL;
	if (OPTS_VALID(opts, egpu_ptx_link_opts, "egpu_ptx_link"))
		return EGPU_EINVAL;
	jit = (struct cu_jit){ OPTS_GET(opts, jit_cnt, 0),
			       OPTS_GET(opts, jit_keys, NULL),
			       OPTS_GET(opts, jit_vals, NULL) };
	if (jit.n && (!jit.keys || !jit.vals))
		return err_set(EGPU_EINVAL, "egpu_ptx_link: jit_cnt without jit_keys and jit_vals");
	if (ctx->offline)
		return err_set(EGPU_EINVAL, "egpu_ptx_link: the context is offline (inspection only)");
	regs = mem_trace_runtime_regs(ctx);
	if (!regs)
		return err_set(EGPU_ENOENT, "egpu_ptx_link: the runtime is not compiled apart (egpu_mem_trace_opts.runtime_max_registers < 0)");
	err = link_split(ptx, regs, &jit, cubin, size);
	if (err)
		err_prefix("egpu_ptx_link");
	return err;
}

int module_load_instrumented(struct egpu_ctx *ctx, const char *ptx,
			     CUmodule *mod)
{
	void *cubin = NULL;
	size_t size = 0;
	int err = egpu_ptx_link(ctx, ptx, NULL, &cubin, &size);

	if (!err) {
		err = cu_module_load_ptx(cubin, mod);
		free(cubin);
		if (!err)
			return 0;
		err_prefix("loading the linked cubin");
	}
	if (err != EGPU_ENOENT)
		log_msg(&ctx->log, EGPU_LOG_WARN,
			"the device runtime not compiled apart, the module loaded as one: %s",
			egpu_errmsg());
	return cu_module_load_ptx(ptx, mod);
}
