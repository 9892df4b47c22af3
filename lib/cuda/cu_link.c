/* SPDX-License-Identifier: MIT */
/*
 * Two PTX modules linked by the driver's JIT linker (cuLink*), the second
 * with a register limit of its own: how a traced module is loaded with the
 * device runtime compiled apart (docs/events.md, "The runtime compiled
 * apart"; the text cut in two by ptx/split.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "cuda/cu.h"

#define LOG_SIZE 8192
#define OWN_OPTS 2 /* the error log and its size */

/* @jit, less its error log (ours replaces it), then ours. */
struct link_opts {
	CUjit_option *keys;
	void **vals;
	unsigned n;
	unsigned max_regs; /* the application's CU_JIT_MAX_REGISTERS, 0: none */
};

static int link_opts_make(struct link_opts *o, const struct cu_jit *jit,
			  char *log)
{
	unsigned n = jit ? jit->n : 0;

	o->keys = calloc(n + OWN_OPTS, sizeof(*o->keys));
	o->vals = calloc(n + OWN_OPTS, sizeof(*o->vals));
	if (!o->keys || !o->vals)
		return err_set(EGPU_ENOMEM, "linking: out of memory");
	o->max_regs = cu_jit_max_regs(jit);
	for (unsigned i = 0; i < n; i++) {
		CUjit_option k = jit->keys[i];

		if (k == CU_JIT_ERROR_LOG_BUFFER ||
		    k == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
			continue;
		o->keys[o->n] = k;
		o->vals[o->n++] = jit->vals[i];
	}
	o->keys[o->n] = CU_JIT_ERROR_LOG_BUFFER;
	o->vals[o->n++] = log;
	o->keys[o->n] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
	o->vals[o->n++] = (void *)(uintptr_t)LOG_SIZE;
	return 0;
}

unsigned cu_jit_max_regs(const struct cu_jit *jit)
{
	unsigned max = 0;

	for (unsigned i = 0; jit && i < jit->n; i++)
		if (jit->keys[i] == CU_JIT_MAX_REGISTERS)
			max = (unsigned)(uintptr_t)jit->vals[i];
	return max;
}

/* The failure of @what, with the JIT's log when it wrote one. */
static int link_fail(CUresult res, const char *what, const char *log)
{
	cu_check(res, what);
	if (log[0])
		err_prefix("%s", log);
	return EGPU_ECUDA;
}

static int add_ptx(const struct cu_driver *d, CUlinkState ls, const char *ptx,
		   const char *name, unsigned regs, const char *log)
{
	CUjit_option key = CU_JIT_MAX_REGISTERS;
	void *val = (void *)(uintptr_t)regs;
	char what[64];
	CUresult res;

	res = d->cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1,
			       name, regs ? 1 : 0, regs ? &key : NULL,
			       regs ? &val : NULL);
	if (res == CUDA_SUCCESS)
		return 0;
	snprintf(what, sizeof(what), "cuLinkAddData of %s", name);
	return link_fail(res, what, log);
}

static int complete(const struct cu_driver *d, CUlinkState ls, const char *log,
		    void **cubin, size_t *size)
{
	void *out = NULL;
	size_t n = 0;
	CUresult res = d->cuLinkComplete(ls, &out, &n);

	if (res != CUDA_SUCCESS)
		return link_fail(res, "cuLinkComplete", log);
	*cubin = malloc(n); /* the linker's is freed by cuLinkDestroy */
	if (!*cubin)
		return err_set(EGPU_ENOMEM, "linking: out of memory");
	memcpy(*cubin, out, n);
	*size = n;
	return 0;
}

int cu_link_ptx(const char *app, const char *rt, unsigned rt_regs,
		const struct cu_jit *jit, void **cubin, size_t *size)
{
	const struct cu_driver *d = cu();
	struct link_opts o = { 0 };
	CUlinkState ls = NULL;
	char *log = calloc(1, LOG_SIZE);
	int err = log ? 0 : err_set(EGPU_ENOMEM, "linking: out of memory");

	*cubin = NULL;
	if (!d && !err)
		err = EGPU_ENODEV;
	if (!err)
		err = link_opts_make(&o, jit, log);
	if (!err && (err = cu_check(d->cuLinkCreate(o.n, o.keys, o.vals, &ls),
				    "cuLinkCreate")))
		ls = NULL;
	/* the application's own limit binds the runtime too */
	if (o.max_regs && o.max_regs < rt_regs)
		rt_regs = o.max_regs;
	if (!err)
		err = add_ptx(d, ls, app, "application.ptx", 0, log);
	if (!err)
		err = add_ptx(d, ls, rt, "egpu_runtime.ptx", rt_regs, log);
	if (!err)
		err = complete(d, ls, log, cubin, size);
	if (ls)
		d->cuLinkDestroy(ls);
	free(o.keys);
	free(o.vals);
	free(log);
	return err;
}
