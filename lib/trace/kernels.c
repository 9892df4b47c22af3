/* SPDX-License-Identifier: MIT */
/*
 * Kernels by name with their GPU time, launches and CPU call paths
 * (kernels.h): what the summary table and egpu_trace_kernel() show.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

static int group_by_ns(const void *x, const void *y)
{
	const struct path_group *a = x, *b = y;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return (a->op > b->op) - (a->op < b->op);
}

static int kernel_by_ns(const void *x, const void *y)
{
	const struct kernel_sum *a = x, *b = y;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

static const char *op_name(const struct trace_data *td, const struct path_group *g)
{
	const char *s = td->ops[g->op].name;

	return s ? s : "?";
}

int kernel_sums(const struct trace_data *td, struct kernel_sums *ks)
{
	struct kernel_sum *k = NULL;
	size_t n = 0;
	int err;

	memset(ks, 0, sizeof(*ks));
	err = path_groups(td, BY_KERNEL, false, &ks->groups, &ks->group_cnt);
	if (err)
		return err;
	/* At most one kernel per group; groups of a kernel are adjacent. */
	if (ks->group_cnt && !(k = calloc(ks->group_cnt, sizeof(*k)))) {
		free(ks->groups);
		return err_set(EGPU_ENOMEM, "trace: %zu kernel paths", ks->group_cnt);
	}
	for (size_t i = 0; i < ks->group_cnt; i++) {
		struct path_group *g = &ks->groups[i];

		if (!n || strcmp(k[n - 1].name, op_name(td, g)))
			k[n++] = (struct kernel_sum){ .name = op_name(td, g), .paths = g };
		k[n - 1].ns += g->ns;
		k[n - 1].launches += g->ops;
		k[n - 1].path_cnt++;
	}
	for (size_t i = 0; i < n; i++)
		qsort(k[i].paths, k[i].path_cnt, sizeof(*k[i].paths), group_by_ns);
	if (n)
		qsort(k, n, sizeof(*k), kernel_by_ns);
	ks->k = k;
	ks->cnt = n;
	return 0;
}

void kernel_sums_free(struct kernel_sums *ks)
{
	free(ks->k);
	free(ks->groups);
	memset(ks, 0, sizeof(*ks));
}

const struct path_group *kernel_hottest(const struct trace_data *td,
					const struct kernel_sum *k)
{
	for (size_t i = 0; i < k->path_cnt; i++)
		if (td->ops[k->paths[i].op].api != TRACE_NONE)
			return &k->paths[i];
	return NULL;
}

/* Each kernel's name and hottest path, NUL-terminated, one after another. */
static void put_strings(const struct trace_data *td, const struct kernel_sums *ks,
			struct strbuf *sb)
{
	for (size_t i = 0; i < ks->cnt; i++) {
		const struct path_group *hot = kernel_hottest(td, &ks->k[i]);
		struct op_path p;

		sb_addn(sb, ks->k[i].name, strlen(ks->k[i].name) + 1);
		if (hot) {
			op_path(td, &td->ops[hot->op], false, &p);
			path_put(sb, &p, path_host_depth(&p));
		}
		sb_addn(sb, "", 1);
	}
}

int trace_kernels(const struct trace_data *td, struct egpu_trace_kernel **out,
		  size_t *cnt)
{
	struct egpu_trace_kernel *v;
	struct kernel_sums ks;
	struct strbuf sb;
	char *s;
	int err;

	*out = NULL;
	*cnt = 0;
	err = kernel_sums(td, &ks);
	if (err)
		return err;
	sb_init(&sb);
	put_strings(td, &ks, &sb);
	v = sb_ok(&sb) ? malloc(ks.cnt * sizeof(*v) + sb.len + 1) : NULL;
	if (!v) {
		err = err_set(EGPU_ENOMEM, "trace: %zu kernels", ks.cnt);
		goto out;
	}
	s = memcpy((char *)(v + ks.cnt), sb.buf ? sb.buf : "", sb.len + 1);
	for (size_t i = 0; i < ks.cnt; i++) {
		const struct path_group *hot = kernel_hottest(td, &ks.k[i]);

		v[i] = (struct egpu_trace_kernel){
			.name = s,
			.launches = ks.k[i].launches,
			.gpu_ns = ks.k[i].ns,
			.hottest_path = s + strlen(s) + 1,
			.hottest_ns = hot ? hot->ns : 0,
		};
		s = (char *)v[i].hottest_path + strlen(v[i].hottest_path) + 1;
	}
	*out = v;
	*cnt = ks.cnt;
out:
	sb_free(&sb);
	kernel_sums_free(&ks);
	return err;
}
