/* SPDX-License-Identifier: MIT */
/* Module-scope .global and .const variables of a PTX module. */
#include <stdlib.h>
#include <string.h>

#include "memcheck/memcheck_globals.h"
#include "core/core.h"
#include "ptx/module.h"

/* Whether variable item @it lives in global or constant memory. */
static bool in_memory(const struct ptx_module *m, const struct ptx_item *it)
{
	for (uint32_t t = it->first; t < it->name; t++)
		if (tok_is(m, t, ".global") || tok_is(m, t, ".const"))
			return true;
	return false;
}

void mc_globals_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int mc_ptx_globals(const char *ptx, size_t len, char ***names, size_t *n)
{
	struct ptx_module *m = NULL;
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	int err = ptx_text_len(ptx, &len);

	if (!err)
		err = ptx_parse("module", ptx, len, &m);
	for (uint32_t i = 0; !err && i < m->nitems; i++) {
		const struct ptx_item *it = &m->items[i];

		/* egpu_dev_*: the device runtime's own (lib/device/device.h),
		 * which the application's kernels never reach; left out, so
		 * that one placed after an array of the application is not
		 * taken for its continuation */
		if (it->kind != IT_VAR || it->linkage == LINK_EXTERN ||
		    !in_memory(m, it) || (m->toks[it->name].len > 9 &&
					  !strncmp(tok_text(m, it->name),
						   "egpu_dev_", 9)))
			continue;
		if (!ARRAY_GROW(v, cap, cnt, 8) ||
		    !(v[cnt] = strndup(tok_text(m, it->name),
				       m->toks[it->name].len)))
			err = err_set(EGPU_ENOMEM, "memcheck: no memory for variable names");
		else
			cnt++;
	}
	ptx_module_free(m);
	if (err) {
		mc_globals_free(v, cnt);
		return err;
	}
	*names = v;
	*n = cnt;
	return 0;
}

int mc_table_globals(struct mc_table *t, const char *ptx, size_t len,
		     mc_global_fn where, void *user)
{
	char **names = NULL;
	size_t n = 0;
	int first = mc_ptx_globals(ptx, len, &names, &n);

	for (size_t i = 0; i < n; i++) {
		uint64_t addr = 0;
		size_t size = 0;
		int err = 0;

		if (!where(user, names[i], &addr, &size) && size)
			err = mc_table_alloc(t, addr, size, MC_KIND_GLOBAL);
		if (err && !first)
			first = err;
	}
	mc_globals_free(names, n);
	return first;
}
