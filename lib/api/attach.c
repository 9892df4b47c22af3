/* SPDX-License-Identifier: MIT */
/* Attachments: which program runs where, applied at instrumentation. */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "egpu/ctx.h"

/* Every state space and access kind egpu_mem_ctx can name. */
#define MEM_SPACES ((1u << (EGPU_SPACE_PARAM + 1)) - 1)
#define MEM_KINDS (((1u << (EGPU_MEM_ASYNC + 1)) - 1) & ~1u)

static int check_masks(const struct egpu_prog *prog, enum egpu_attach_point at,
		       const struct egpu_attach_opts *opts)
{
	uint32_t spaces = OPTS_GET(opts, mem_spaces, 0);
	uint32_t kinds = OPTS_GET(opts, mem_kinds, 0);

	if (at != EGPU_ATTACH_MEM && (spaces || kinds))
		return err_set(EGPU_EINVAL,
			       "prog '%s': mem_spaces and mem_kinds apply to memory probes only",
			       prog->spec->name);
	if (spaces & ~MEM_SPACES)
		return err_set(EGPU_EINVAL,
			       "prog '%s': mem_spaces 0x%x names no state space (bits 0x%x: 1u << EGPU_SPACE_*)",
			       prog->spec->name, spaces, MEM_SPACES);
	if (kinds & ~MEM_KINDS)
		return err_set(EGPU_EINVAL,
			       "prog '%s': mem_kinds 0x%x names no access kind (bits 0x%x: 1u << EGPU_MEM_*)",
			       prog->spec->name, kinds, MEM_KINDS);
	return 0;
}

static int link_add(struct egpu_prog *prog, const char *kernel,
		    enum egpu_attach_point at,
		    const struct egpu_attach_opts *opts, struct egpu_link **out)
{
	struct egpu_ctx *ctx = prog->obj->ctx;
	struct egpu_link *l;
	int err;

	if (at != EGPU_ATTACH_ENTRY && at != EGPU_ATTACH_EXIT &&
	    at != EGPU_ATTACH_MEM)
		return err_set(EGPU_EINVAL, "prog '%s': attach point %d is not entry, exit or mem",
			       prog->spec->name, at);
	err = check_masks(prog, at, opts);
	if (err)
		return err;
	err = prog_verify(prog, at, 0);
	if (err) {
		err_prefix("cannot attach to '%s'", kernel);
		return err;
	}
	l = calloc(1, sizeof(*l));
	if (!l || !(l->kernel = strdup(kernel))) {
		free(l);
		return err_set(EGPU_ENOMEM, "prog '%s': out of memory", prog->spec->name);
	}
	l->ctx = ctx;
	l->prog = prog;
	l->at = at;
	l->mem_spaces = OPTS_GET(opts, mem_spaces, 0);
	l->mem_kinds = OPTS_GET(opts, mem_kinds, 0);
	l->strict = OPTS_GET(opts, strict, false);
	l->next = ctx->links;
	if (ctx->links)
		ctx->links->prev = l;
	ctx->links = l;
	*out = l;
	return 0;
}

egpu_link *egpu_attach_kernel(egpu_prog *prog, const char *kernel,
			      enum egpu_attach_point at,
			      const struct egpu_attach_opts *opts)
{
	struct egpu_link *l = NULL;

	if (!prog || !kernel || !*kernel) {
		err_set(EGPU_EINVAL, "egpu_attach_kernel: NULL program or empty kernel name");
		return NULL;
	}
	if (OPTS_VALID(opts, egpu_attach_opts, "egpu_attach_kernel"))
		return NULL;
	link_add(prog, kernel, at, opts, &l);
	return l;
}

int egpu_attach_all(egpu_obj *obj)
{
	struct egpu_link *l;
	int n = 0, err;

	if (!obj)
		return err_set(EGPU_EINVAL, "egpu_attach_all: NULL object");
	for (size_t i = 0; i < obj->spec.prog_cnt; i++) {
		struct egpu_prog *p = &obj->progs[i];

		/* host probes are run by their caller (egpu attach's agent) */
		if (p->spec->attach == EGPU_ATTACH_NONE ||
		    attach_is_host(p->spec->attach))
			continue;
		/* A refused probe was reported at load; the others still run. */
		if (p->refused) {
			log_msg(&obj->ctx->log, EGPU_LOG_WARN,
				"object '%s': not attaching refused prog '%s'",
				obj->name, p->spec->name);
			continue;
		}
		EGPU_OPTS(egpu_attach_opts, o, .mem_spaces = p->spec->mem_spaces,
			  .mem_kinds = p->spec->mem_kinds);

		err = link_add(p, p->spec->kernel, p->spec->attach, &o, &l);
		if (err) {
			err_prefix("object '%s': section '%s'", obj->name, p->spec->section);
			return err;
		}
		n++;
	}
	return n;
}

void egpu_link_destroy(egpu_link *l)
{
	if (!l)
		return;
	if (l->prev)
		l->prev->next = l->next;
	else
		l->ctx->links = l->next;
	if (l->next)
		l->next->prev = l->prev;
	free(l->kernel);
	free(l);
}

void links_drop_obj(struct egpu_ctx *ctx, const struct egpu_obj *obj)
{
	struct egpu_link *l = ctx->links, *next;

	for (; l; l = next) {
		next = l->next;
		if (l->prog->obj == obj)
			egpu_link_destroy(l);
	}
}
