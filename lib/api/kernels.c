/* SPDX-License-Identifier: MIT */
/*
 * Kernel identity in a context. Every kernel a context instruments gets an
 * id unique in the context, and the same id again when the same kernel of
 * the same module text is instrumented again; memory sites are numbered
 * context-wide the same way. Frameworks make one module per kernel (Triton,
 * torch.compile), so ids counted within a module would all be 0.
 */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "egpu/ctx.h"

struct ctx_kernel {
	char *name;       /* mangled */
	char *demangled;
	uint32_t module;  /* index in kernel_table.modules */
	uint32_t index;   /* among the module's .entry */
};

struct ctx_module {
	uint64_t hash;    /* of its PTX text (FNV-1a) */
	size_t len;
	uint32_t *ids;    /* kernel id by index in the module */
	uint32_t nids, capids;
	uint32_t site_base;
	uint32_t nsites;  /* site numbers reserved from site_base */
	bool sites_set;
};

struct kernel_table {
	struct ctx_kernel *kernels; /* by id */
	uint32_t nkernels, cap;
	struct ctx_module *modules;
	uint32_t nmodules, capm;
	uint32_t next_site;
};

static uint64_t text_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h;
}

static int grow(void **v, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t c = *cap ? *cap * 2 : 16;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, (size_t)c * size);
	if (!p)
		return err_set(EGPU_ENOMEM, "kernel table: out of memory");
	*v = p;
	*cap = c;
	return 0;
}

static struct kernel_table *table(struct egpu_ctx *ctx)
{
	if (!ctx->ktab)
		ctx->ktab = calloc(1, sizeof(*ctx->ktab));
	if (!ctx->ktab)
		err_set(EGPU_ENOMEM, "kernel table: out of memory");
	return ctx->ktab;
}

int kernels_module(struct egpu_ctx *ctx, const char *ptx, size_t len,
		   uint32_t *module)
{
	struct kernel_table *t = table(ctx);
	uint64_t h = text_hash(ptx, len);
	int err;

	if (!t)
		return EGPU_ENOMEM;
	for (uint32_t i = 0; i < t->nmodules; i++)
		if (t->modules[i].hash == h && t->modules[i].len == len) {
			*module = i;
			return 0;
		}
	err = grow((void **)&t->modules, &t->capm, t->nmodules,
		   sizeof(*t->modules));
	if (err)
		return err;
	t->modules[t->nmodules] = (struct ctx_module){ .hash = h, .len = len };
	*module = t->nmodules++;
	return 0;
}

static int add_kernel(struct kernel_table *t, struct ctx_module *m,
		      uint32_t module, const char *mangled,
		      const char *demangled)
{
	int err;

	if (t->nkernels == EGPU_MEM_KERNEL_SHARED)
		return err_set(EGPU_E2BIG, "kernel table: 2^32-1 kernels");
	err = grow((void **)&t->kernels, &t->cap, t->nkernels, sizeof(*t->kernels));
	if (!err)
		err = grow((void **)&m->ids, &m->capids, m->nids, sizeof(*m->ids));
	if (err)
		return err;
	t->kernels[t->nkernels] = (struct ctx_kernel){
		.name = strdup(mangled), .demangled = strdup(demangled),
		.module = module, .index = m->nids,
	};
	if (!t->kernels[t->nkernels].name || !t->kernels[t->nkernels].demangled) {
		free(t->kernels[t->nkernels].name);
		free(t->kernels[t->nkernels].demangled);
		return err_set(EGPU_ENOMEM, "kernel table: out of memory");
	}
	m->ids[m->nids++] = t->nkernels++;
	return 0;
}

/* ptx_numbering.kernel_id: user is a struct kernel_numbering. */
static int number_kernel(void *user, uint32_t index, const char *mangled,
			 const char *demangled, uint32_t *id)
{
	struct kernel_numbering *kn = user;
	struct kernel_table *t = kn->ctx->ktab;
	struct ctx_module *m = &t->modules[kn->module];
	int err = 0;

	if (index == m->nids)
		err = add_kernel(t, m, kn->module, mangled, demangled);
	if (err)
		return err;
	if (index > m->nids || strcmp(t->kernels[m->ids[index]].name, mangled))
		return err_set(EGPU_EINVAL,
			       "kernel table: kernel %u of the module is '%s', was '%s' for the same text",
			       index, mangled,
			       index < m->nids ? t->kernels[m->ids[index]].name : "?");
	*id = m->ids[index];
	return 0;
}

/* ptx_numbering.site_base: the module's range again when it fits. */
static int number_sites(void *user, uint32_t nsites, uint32_t *base)
{
	struct kernel_numbering *kn = user;
	struct kernel_table *t = kn->ctx->ktab;
	struct ctx_module *m = &t->modules[kn->module];

	if (m->sites_set && nsites <= m->nsites) {
		*base = m->site_base;
		return 0;
	}
	if (nsites > UINT32_MAX - t->next_site)
		return err_set(EGPU_E2BIG,
			       "memory sites: the context numbered 2^32 of them");
	m->site_base = *base = t->next_site;
	m->nsites = nsites;
	m->sites_set = true;
	t->next_site += nsites;
	return 0;
}

int kernels_numbering(struct egpu_ctx *ctx, const char *ptx, size_t len,
		      struct kernel_numbering *kn)
{
	*kn = (struct kernel_numbering){
		.ctx = ctx,
		.num = { .kernel_id = number_kernel,
			 .site_base = number_sites, .user = kn },
	};
	return kernels_module(ctx, ptx, len, &kn->module);
}

void kernels_free(struct egpu_ctx *ctx)
{
	struct kernel_table *t = ctx->ktab;

	if (!t)
		return;
	for (uint32_t i = 0; i < t->nkernels; i++) {
		free(t->kernels[i].name);
		free(t->kernels[i].demangled);
	}
	for (uint32_t i = 0; i < t->nmodules; i++)
		free(t->modules[i].ids);
	free(t->kernels);
	free(t->modules);
	free(t);
	ctx->ktab = NULL;
}

uint32_t egpu_kernel_cnt(const egpu_ctx *ctx)
{
	return ctx && ctx->ktab ? ctx->ktab->nkernels : 0;
}

int egpu_kernel_info(const egpu_ctx *ctx, uint32_t kernel_id,
		     struct egpu_kernel_info *info)
{
	const struct ctx_kernel *k;
	const struct ctx_module *m;

	if (!ctx || !info)
		return err_set(EGPU_EINVAL, "egpu_kernel_info: NULL argument");
	if (info->sz < sizeof(size_t))
		return err_set(EGPU_EINVAL, "egpu_kernel_info: info->sz not set");
	if (kernel_id >= egpu_kernel_cnt(ctx))
		return err_set(EGPU_ENOENT,
			       "egpu_kernel_info: no kernel %u (the context instrumented %u)",
			       kernel_id, egpu_kernel_cnt(ctx));
	k = &ctx->ktab->kernels[kernel_id];
	m = &ctx->ktab->modules[k->module];
	EGPU_OPTS(egpu_kernel_info, r, .kernel_id = kernel_id, .name = k->name,
		  .demangled = k->demangled, .module = k->module,
		  .module_hash = m->hash, .index = k->index);
	/* The caller's struct may be older (smaller) than ours. */
	memcpy(info, &r, info->sz < sizeof(r) ? info->sz : sizeof(r));
	info->sz = info->sz < sizeof(r) ? info->sz : sizeof(r);
	return 0;
}

/* Add the value under kernel id @id's key to @sum; 1 if there was one. */
static int add_kernel_value(egpu_map *map, uint32_t id, void *sum, void *val)
{
	uint64_t key = id; /* little-endian: its first 4 bytes are the u32 */
	int err = egpu_map_lookup_sum(map, &key, val);

	if (err == EGPU_ENOENT || err == EGPU_E2BIG)
		return 0; /* no entry (hash) or beyond the array */
	if (err)
		return err;
	words_add(sum, val, egpu_map_value_size(map));
	return 1;
}

int egpu_map_lookup_kernel(egpu_map *map, const char *kernel, void *sum)
{
	const struct egpu_ctx *ctx;
	uint32_t size, ks;
	void *val;
	int n = 0, found = 0, err = 0;

	if (!map || !kernel || !sum)
		return err_set(EGPU_EINVAL, "egpu_map_lookup_kernel: NULL argument");
	ctx = map->obj->ctx;
	ks = egpu_map_key_size(map);
	if (ks != 4 && ks != 8)
		return err_set(EGPU_EINVAL,
			       "map '%s': keys of %u bytes are not kernel ids (4 or 8 bytes)",
			       egpu_map_name(map), ks);
	size = egpu_map_value_size(map);
	val = malloc(size);
	if (!val)
		return err_set(EGPU_ENOMEM, "map '%s': out of memory", egpu_map_name(map));
	memset(sum, 0, size);
	for (uint32_t id = 0; id < egpu_kernel_cnt(ctx) && !err; id++) {
		bool match = false;

		err = ptx_kernel_matches(ctx->ktab->kernels[id].name, kernel, &match);
		if (!err && match) {
			found++;
			err = add_kernel_value(map, id, sum, val);
			n += err > 0;
			err = err > 0 ? 0 : err;
		}
	}
	free(val);
	if (!err && !found)
		err = err_set(EGPU_ENOENT,
			      "map '%s': no kernel the context instrumented matches '%s'",
			      egpu_map_name(map), kernel);
	return err ? err : n;
}
