/* SPDX-License-Identifier: MIT */
/* Sites named from instrumentation reports (memcheck_names.h). */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "memcheck/memcheck_names.h"

/* The kernel a site reports: its kernel's demangled name, or for a .func
 * several kernels reach, the .func's. */
static const char *kernel_of(const struct egpu_report *rep,
			     const struct egpu_mem_site *s)
{
	for (uint32_t k = 0; k < rep->kernel_cnt; k++)
		if (rep->kernels[k].kernel_id == s->kernel_id)
			return rep->kernels[k].demangled;
	return s->function;
}

static int room(struct mc_names *names, uint32_t site)
{
	size_t cap;
	struct mc_name *v;

	if (site < names->n)
		return 0;
	cap = site + 1 > 2 * names->n ? site + 1 : 2 * names->n;
	v = realloc(names->v, cap * sizeof(*v));
	if (!v)
		return err_set(EGPU_ENOMEM, "memcheck: no memory to name site %u",
			       site);
	memset(v + names->n, 0, (cap - names->n) * sizeof(*v));
	names->v = v;
	names->n = cap;
	return 0;
}

static int name_site(struct mc_names *names, const struct egpu_report *rep,
		     const struct egpu_mem_site *s)
{
	bool loc = s->file && s->line;
	struct mc_name *n;
	int err = room(names, s->site);

	if (err)
		return err;
	n = &names->v[s->site];
	if (n->kernel)
		return 0; /* the same module again */
	n->kernel = strdup(kernel_of(rep, s));
	n->file = loc ? strdup(s->file) : NULL;
	n->line = loc ? s->line : s->ptx_line;
	if (n->kernel && (n->file || !loc))
		return 0;
	free(n->kernel);
	free(n->file);
	*n = (struct mc_name){ 0 };
	return err_set(EGPU_ENOMEM, "memcheck: no memory to name site %u",
		       s->site);
}

int mc_names_add(struct mc_names *names, const struct egpu_report *rep)
{
	for (uint32_t i = 0; i < rep->mem_site_cnt; i++) {
		int err = name_site(names, rep, &rep->mem_sites[i]);

		if (err)
			return err;
	}
	return 0;
}

bool mc_names_site(void *user, uint32_t site, struct mc_site *out)
{
	const struct mc_names *names = user;
	const struct mc_name *n = site < names->n ? &names->v[site] : NULL;

	if (!n || !n->kernel)
		return false;
	*out = (struct mc_site){ n->kernel, n->file, n->line };
	return true;
}

void mc_names_clear(struct mc_names *names)
{
	for (size_t i = 0; i < names->n; i++) {
		free(names->v[i].kernel);
		free(names->v[i].file);
	}
	free(names->v);
	*names = (struct mc_names){ 0 };
}
