/* SPDX-License-Identifier: MIT */
/*
 * Translate once: the PTX of every probe a context links in, kept for the
 * context's life and handed to every module it instruments. Frameworks
 * make one module per kernel; without this every module paid the LLVM
 * translation of every probe again.
 *
 * A translation depends on the program (its linked instructions, whether
 * it was verified for an attach point, which makes every access aligned,
 * and what its first verification proved, fixed before any
 * translation), the name of the emitted function, the target, and the map
 * addresses baked in as constants. The key holds all of them. A lookup
 * reads the addresses and allocates nothing: the maps were moved to the
 * GPU before, in a step of their own (ctx_maps_to_gpu, gpu_maps.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"

struct jit_cached {
	struct jit_cached *next;
	const struct egpu_prog *prog;
	char *func;
	char sm[16];
	struct jit_map *maps; /* one per map of the program's object */
	size_t nmaps;
	char *ptx;
	size_t len;
	unsigned needs;       /* enum jit_need: what the PTX calls */
};

static bool same_key(const struct jit_cached *c, const struct egpu_prog *prog,
		     const char *func, const char *sm,
		     const struct jit_map *maps, size_t nmaps)
{
	return c->prog == prog && !strcmp(c->func, func) &&
	       !strcmp(c->sm, sm) && c->nmaps == nmaps &&
	       (!nmaps || !memcmp(c->maps, maps, nmaps * sizeof(*maps)));
}

static void cached_free(struct jit_cached *c)
{
	free(c->func);
	free(c->maps);
	free(c->ptx);
	free(c);
}

/* Translate @prog and keep it under its key; @maps becomes the entry's. */
static int translate(struct egpu_ctx *ctx, struct egpu_prog *prog,
		     const char *func, const char *sm, struct jit_map *maps,
		     size_t nmaps, struct jit_cached **out)
{
	struct jit_cached *c = calloc(1, sizeof(*c));
	int err;

	if (!c) {
		free(maps);
		return err_set(EGPU_ENOMEM, "prog '%s': out of memory", prog->spec->name);
	}
	*c = (struct jit_cached){ .prog = prog, .func = strdup(func),
				  .maps = maps, .nmaps = nmaps };
	snprintf(c->sm, sizeof(c->sm), "%s", sm);
	if (c->func) {
		struct prog_ptx_out out = { 0 };

		err = prog_ptx(prog, maps, func, sm, false, &out);
		c->ptx = out.ptx;
		c->len = out.len;
		c->needs = out.needs;
	} else {
		err = err_set(EGPU_ENOMEM, "prog '%s': out of memory", prog->spec->name);
	}
	if (err) {
		cached_free(c);
		return err;
	}
	c->next = ctx->jit_cache;
	ctx->jit_cache = c;
	*out = c;
	return 0;
}

int jit_cache_probe(struct egpu_ctx *ctx, struct egpu_prog *prog,
		    const char *func, const char *sm, struct ptx_text *out,
		    unsigned *needs)
{
	size_t n = prog->obj->spec.map_cnt;
	struct jit_map *maps = calloc(n ? n : 1, sizeof(*maps));
	struct jit_cached *c;
	int err;

	if (!maps)
		return err_set(EGPU_ENOMEM, "prog '%s': out of memory", prog->spec->name);
	err = obj_gpu_jit_maps(prog->obj, maps);
	if (err) {
		free(maps);
		return err;
	}
	for (c = ctx->jit_cache; c; c = c->next)
		if (same_key(c, prog, func, sm, maps, n))
			break;
	if (c)
		free(maps);
	else
		err = translate(ctx, prog, func, sm, maps, n, &c);
	if (!err) {
		*out = (struct ptx_text){ .name = prog->spec->name,
					  .text = c->ptx, .len = c->len };
		*needs |= c->needs;
	}
	return err;
}

void jit_cache_drop_prog(struct egpu_ctx *ctx, const struct egpu_prog *prog)
{
	struct jit_cached **p = &ctx->jit_cache;

	while (*p) {
		struct jit_cached *c = *p;

		if (c->prog == prog) {
			*p = c->next;
			cached_free(c);
		} else {
			p = &c->next;
		}
	}
}

void jit_cache_free(struct egpu_ctx *ctx)
{
	while (ctx->jit_cache) {
		struct jit_cached *c = ctx->jit_cache;

		ctx->jit_cache = c->next;
		cached_free(c);
	}
}

size_t jit_cache_size(const struct egpu_ctx *ctx)
{
	size_t n = 0;

	for (const struct jit_cached *c = ctx->jit_cache; c; c = c->next)
		n++;
	return n;
}
