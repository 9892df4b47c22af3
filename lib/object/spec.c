/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "object/btf_value.h"
#include "object/spec.h"

static void prog_free(struct prog_spec *p)
{
	free(p->name);
	free(p->section);
	free(p->kernel);
	free(p->insns);
	free(p->lines);
	free(p->line_strs);
}

void object_spec_free(struct object_spec *spec)
{
	if (!spec)
		return;
	for (size_t i = 0; i < spec->prog_cnt; i++)
		prog_free(&spec->progs[i]);
	for (size_t i = 0; i < spec->map_cnt; i++) {
		free(spec->maps[i].name);
		free(spec->maps[i].init);
	}
	free(spec->progs);
	free(spec->maps);
	object_btf_free(spec->btf);
	memset(spec, 0, sizeof(*spec));
}

static int prog_init(struct prog_spec *p, const char *name,
		     const char *section, const void *insns, size_t insn_cnt)
{
	int at = object_attach_from_section(section, &p->kernel);

	if (at < 0)
		return at;
	p->attach = at;
	at = object_mem_filter_from_section(section, &p->mem_spaces, &p->mem_kinds);
	if (at < 0)
		return at;
	p->name = strdup(name);
	p->section = strdup(section);
	if (!p->name || !p->section)
		return err_set(EGPU_ENOMEM, "out of memory");
	if (!insn_cnt)
		return 0;  /* the verifier says why that is wrong */
	p->insns = malloc(insn_cnt * sizeof(*p->insns));
	if (!p->insns)
		return err_set(EGPU_ENOMEM, "out of memory");
	memcpy(p->insns, insns, insn_cnt * sizeof(*p->insns));
	p->insn_cnt = insn_cnt;
	return 0;
}

int object_spec_add_prog(struct object_spec *spec, const char *name,
			 const char *section, const void *insns,
			 size_t insn_cnt)
{
	struct prog_spec *progs, *p;
	int err;

	progs = realloc(spec->progs, (spec->prog_cnt + 1) * sizeof(*progs));
	if (!progs)
		return err_set(EGPU_ENOMEM, "out of memory");
	spec->progs = progs;
	p = &progs[spec->prog_cnt];
	memset(p, 0, sizeof(*p));
	err = prog_init(p, name, section, insns, insn_cnt);
	if (err) {
		prog_free(p);
		err_prefix("prog '%s'", name);
		return err;
	}
	spec->prog_cnt++;
	return 0;
}
