/* SPDX-License-Identifier: MIT */
/*
 * egpu_memcheck_enable(): the check at every memory access
 * (docs/memcheck.md). Instrumenting then adds one request that makes the
 * splicer check each global, shared, local and generic access
 * (ptx/memcheck_site.c), and links in the device runtime's check
 * (device/memcheck.cu) with a module defining the addresses of the
 * caller's buffers, which the check reads as variables. An
 * egpu_memcheck (memcheck_api.c) enabled this way also gets the names of
 * the sites instrumented.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "device/device.h"
#include "egpu/ctx.h"
#include "memcheck/memcheck_names.h"

struct memcheck_state {
	struct ptx_memcheck req;
	char module[640]; /* the buffers' definitions, PTX */
	struct memcheck_user user; /* an egpu_memcheck's, or none */
};

/* The checker enabled before loses the context. */
static void forget_user(struct memcheck_state *mc)
{
	if (mc->user.ctx)
		*mc->user.ctx = NULL;
	mc->user = (struct memcheck_user){ 0 };
}

int memcheck_enable_for(egpu_ctx *ctx, const struct egpu_memcheck_opts *opts,
			const struct memcheck_user *user)
{
	struct memcheck_state *mc;

	if (!ctx || !opts)
		return err_set(EGPU_EINVAL, "egpu_memcheck_enable: NULL argument");
	if (OPTS_VALID(opts, egpu_memcheck_opts, "egpu_memcheck_enable"))
		return EGPU_EINVAL;
	if (!opts->index_cell || !opts->states || !opts->counts || !opts->log ||
	    !OPTS_GET(opts, hints, 0))
		return err_set(EGPU_EINVAL,
			       "egpu_memcheck_enable: the index cell, states, counts, log and hints must all be given");
	mc = ctx->memcheck ? ctx->memcheck : calloc(1, sizeof(*mc));
	if (!mc)
		return err_set(EGPU_ENOMEM, "egpu_memcheck_enable: out of memory");
	forget_user(mc);
	if (user)
		mc->user = *user;
	mc->req = (struct ptx_memcheck){
		.contain = OPTS_GET(opts, contain, false),
		.cell = opts->index_cell, .states = opts->states,
		.hints = opts->hints,
	};
	/* The dynamic shared memory's start (every extern .shared array has
	 * it), which is where the static part ends. */
	snprintf(mc->module, sizeof(mc->module),
		 ".version 6.0\n.target sm_50\n.address_size 64\n\n"
		 ".visible .global .align 8 .u64 egpu_dev_mc_cell = %llu;\n"
		 ".visible .global .align 8 .u64 egpu_dev_mc_states = %llu;\n"
		 ".visible .global .align 8 .u64 egpu_dev_mc_counts = %llu;\n"
		 ".visible .global .align 8 .u64 egpu_dev_mc_log = %llu;\n"
		 ".visible .global .align 8 .u64 egpu_dev_mc_hints = %llu;\n"
		 ".extern .shared .align 1 .b8 egpu_dev_mc_smem[];\n",
		 (unsigned long long)opts->index_cell,
		 (unsigned long long)opts->states,
		 (unsigned long long)opts->counts,
		 (unsigned long long)opts->log,
		 (unsigned long long)opts->hints);
	ctx->memcheck = mc;
	return 0;
}

int egpu_memcheck_enable(egpu_ctx *ctx, const struct egpu_memcheck_opts *opts)
{
	return memcheck_enable_for(ctx, opts, NULL);
}

void memcheck_sites(const struct egpu_ctx *ctx, const struct egpu_report *rep)
{
	struct mc_names *names = ctx->memcheck ? ctx->memcheck->user.names
					       : NULL;

	if (names && mc_names_add(names, rep))
		log_msg(&ctx->log, EGPU_LOG_WARN,
			"%s; its reports give the site's number", egpu_errmsg());
}

void memcheck_request(const struct egpu_ctx *ctx, struct ptx_attach *reqs,
		      size_t *nreq)
{
	if (!ctx->memcheck)
		return;
	reqs[(*nreq)++] = (struct ptx_attach){
		.kernel = "*", .point = EGPU_ATTACH_MEM,
		.memcheck = &ctx->memcheck->req, .label = "memcheck",
		.mem_spaces = 1u << EGPU_SPACE_GENERIC | 1u << EGPU_SPACE_GLOBAL |
			      1u << EGPU_SPACE_SHARED | 1u << EGPU_SPACE_LOCAL,
	};
}

void memcheck_modules(const struct egpu_ctx *ctx,
		      struct ptx_text out[MEMCHECK_MODULES_MAX], size_t *nout)
{
	*nout = 0;
	if (!ctx->memcheck)
		return;
	out[0] = (struct ptx_text){ .name = "memcheck",
				    .text = device_memcheck_ptx,
				    .len = device_memcheck_ptx_len };
	out[1] = (struct ptx_text){ .name = "memcheck buffers",
				    .text = ctx->memcheck->module,
				    .len = strlen(ctx->memcheck->module) };
	*nout = MEMCHECK_MODULES_MAX;
}

void memcheck_free(struct egpu_ctx *ctx)
{
	if (ctx->memcheck)
		forget_user(ctx->memcheck);
	free(ctx->memcheck);
	ctx->memcheck = NULL;
}
