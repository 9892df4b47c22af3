/* SPDX-License-Identifier: MIT */
/* Contexts and library-wide queries. */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "core/target.h"
#include "cuda/cu.h"

const char *egpu_version(void)
{
	return EGPU_VERSION_STRING;
}

int egpu_gpu_available(void)
{
	return cu() != NULL;
}

egpu_ctx *egpu_ctx_new(const struct egpu_ctx_opts *opts)
{
	const char *sm = "sm_90";
	struct gpu_target target;
	struct egpu_ctx *ctx;

	if (OPTS_VALID(opts, egpu_ctx_opts, "egpu_ctx_new"))
		return NULL;
	if (OPTS_GET(opts, sm, NULL))
		sm = opts->sm;
	if (target_parse("egpu_ctx_new", sm, &target))
		return NULL;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		err_set(EGPU_ENOMEM, "egpu_ctx_new: out of memory");
		return NULL;
	}
	strcpy(ctx->sm, sm);
	ctx->log.level = EGPU_LOG_WARN;
	ctx->offline = OPTS_GET(opts, offline, false);
	ctx->no_inline = OPTS_GET(opts, no_inline, false);
	ctx->mem_inline_limit = OPTS_GET(opts, mem_inline_limit, 0);
	ctx->thread_slots = OPTS_GET(opts, thread_slots, 0);
	ctx->log.fn = OPTS_GET(opts, log, NULL);
	ctx->log.user = OPTS_GET(opts, log_user, NULL);
	if (OPTS_HAS(opts, log_level))
		ctx->log.level = opts->log_level;
	return ctx;
}

void egpu_ctx_free(egpu_ctx *ctx)
{
	if (!ctx)
		return;
	print_ctx_free(ctx); /* delivers lines still waiting */
	call_ctx_free(ctx);  /* makes the calls still waiting */
	clock_ctx_free(ctx);
	while (ctx->objs)
		egpu_obj_close(ctx->objs);
	ptx_report_free(&ctx->last);
	kernels_free(ctx);
	jit_cache_free(ctx);
	memcheck_free(ctx);
	mem_trace_free(ctx);
	free(ctx->last_kernels);
	free(ctx->last_mem_sites);
	helpers_ctx_free(ctx);
	free(ctx);
}
