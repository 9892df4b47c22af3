/* SPDX-License-Identifier: MIT */
/*
 * Kernel ids to names, for kernel="..." labels. Names come from the
 * instrumentation reports the caller hands over (egpu_metrics_add_kernels).
 * This is the one place that maps an id to a name: when contexts name
 * their kernel ids themselves (issue 16), kernel_label asks the context.
 */
#include <stdlib.h>
#include <string.h>

#include "export/export.h"

static int by_id(const void *a, const void *b)
{
	uint32_t x = ((const struct kernel_name *)a)->id;
	uint32_t y = ((const struct kernel_name *)b)->id;

	return (x > y) - (x < y);
}

static struct kernel_name *find(const struct egpu_metrics *m, uint64_t id)
{
	struct kernel_name key = { .id = (uint32_t)id };

	if (id > UINT32_MAX || !m->kernel_cnt)
		return NULL;
	return bsearch(&key, m->kernels, m->kernel_cnt, sizeof(key), by_id);
}

void kernel_label(const struct egpu_metrics *m, uint64_t id,
		  struct strbuf *sb)
{
	const struct kernel_name *k = find(m, id);

	if (k)
		label_escape(sb, k->name);
	else
		sb_printf(sb, "kernel_%llu", (unsigned long long)id);
}

/* Name @id @name, replacing an earlier name (a later module's kernel
 * with the same per-module id wins until ids are per context). */
static int name_one(struct egpu_metrics *m, uint32_t id, const char *name)
{
	struct kernel_name *k = find(m, id), *grown;
	char *copy = strdup(name);

	if (!copy)
		return err_set(EGPU_ENOMEM, "egpu_metrics_add_kernels: out of "
			       "memory");
	if (k) {
		free(k->name);
		k->name = copy;
		return 0;
	}
	grown = realloc(m->kernels, (m->kernel_cnt + 1) * sizeof(*grown));
	if (!grown) {
		free(copy);
		return err_set(EGPU_ENOMEM, "egpu_metrics_add_kernels: out of "
			       "memory");
	}
	m->kernels = grown;
	m->kernels[m->kernel_cnt++] = (struct kernel_name){ id, copy };
	qsort(m->kernels, m->kernel_cnt, sizeof(*grown), by_id);
	return 0;
}

int kernel_labels_add(struct egpu_metrics *m, const struct egpu_report *r)
{
	for (uint32_t i = 0; i < r->kernel_cnt; i++) {
		const struct egpu_kernel_report *k = &r->kernels[i];
		int err = name_one(m, k->kernel_id,
				   k->demangled ? k->demangled : k->name);

		if (err)
			return err;
	}
	return 0;
}

void kernel_labels_free(struct egpu_metrics *m)
{
	for (size_t i = 0; i < m->kernel_cnt; i++)
		free(m->kernels[i].name);
	free(m->kernels);
	m->kernels = NULL;
	m->kernel_cnt = 0;
}
