/* SPDX-License-Identifier: MIT */
/*
 * BTF checks libbpf 1.1 does not make before it walks the types while
 * opening an object: every type id a type refers to exists, every name is
 * in the string section, and no chain of modifiers and typedefs loops.
 * Without them a corrupted .BTF makes bpf_object__open_mem() read out of
 * bounds or spin forever (newer libbpf validates this itself).
 */
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "core/core.h"
#include "object/libbpf_read.h"

struct btf_checker {
	const struct btf *btf;
	uint32_t type_cnt;
	uint32_t id;       /* the type being checked */
};

static int bad_btf(const struct btf_checker *c, const char *what,
		   uint32_t value)
{
	return err_set(EGPU_EFORMAT, "corrupt BTF: type %u: %s %u", c->id,
		       what, value);
}

static int check_ref(const struct btf_checker *c, uint32_t id)
{
	return id < c->type_cnt ? 0 : bad_btf(c, "refers to missing type", id);
}

static int check_name(const struct btf_checker *c, uint32_t off)
{
	return btf__name_by_offset(c->btf, off) ? 0 :
		bad_btf(c, "name outside the string section at", off);
}

static int check_members(const struct btf_checker *c, const struct btf_type *t)
{
	const struct btf_member *m = btf_members(t);
	int err = 0;

	for (uint16_t i = 0; !err && i < btf_vlen(t); i++) {
		err = check_ref(c, m[i].type);
		if (!err)
			err = check_name(c, m[i].name_off);
	}
	return err;
}

static int check_params(const struct btf_checker *c, const struct btf_type *t)
{
	const struct btf_param *p = btf_params(t);
	int err = check_ref(c, t->type);

	for (uint16_t i = 0; !err && i < btf_vlen(t); i++) {
		err = check_ref(c, p[i].type);
		if (!err)
			err = check_name(c, p[i].name_off);
	}
	return err;
}

static int check_secinfos(const struct btf_checker *c, const struct btf_type *t)
{
	const struct btf_var_secinfo *v = (const void *)(t + 1);
	int err = 0;

	for (uint16_t i = 0; !err && i < btf_vlen(t); i++)
		err = check_ref(c, v[i].type);
	return err;
}

static int check_enum_names(const struct btf_checker *c,
			    const struct btf_type *t)
{
	int err = 0;

	for (uint16_t i = 0; !err && i < btf_vlen(t); i++)
		err = check_name(c, btf_is_enum(t) ? btf_enum(t)[i].name_off :
						     btf_enum64(t)[i].name_off);
	return err;
}

static int check_type(const struct btf_checker *c, const struct btf_type *t)
{
	int err = check_name(c, t->name_off);

	if (err)
		return err;
	switch (btf_kind(t)) {
	case BTF_KIND_PTR: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_FUNC:
	case BTF_KIND_VAR: case BTF_KIND_DECL_TAG: case BTF_KIND_TYPE_TAG:
		return check_ref(c, t->type);
	case BTF_KIND_ARRAY:
		err = check_ref(c, btf_array(t)->type);
		return err ? err : check_ref(c, btf_array(t)->index_type);
	case BTF_KIND_STRUCT: case BTF_KIND_UNION:
		return check_members(c, t);
	case BTF_KIND_FUNC_PROTO:
		return check_params(c, t);
	case BTF_KIND_DATASEC:
		return check_secinfos(c, t);
	case BTF_KIND_ENUM: case BTF_KIND_ENUM64:
		return check_enum_names(c, t);
	}
	return 0;
}

static bool is_link(const struct btf_type *t)
{
	return btf_is_mod(t) || btf_is_typedef(t);
}

/*
 * Chains of modifiers and typedefs must end. Each type is walked once:
 * a chain that meets a type still on the current walk is a loop.
 */
static int check_chains(struct btf_checker *c)
{
	enum { UNSEEN, WALKING, DONE };
	uint8_t *state = calloc(c->type_cnt, 1);
	int err = 0;

	if (!state)
		return err_set(EGPU_ENOMEM, "out of memory");
	for (uint32_t start = 1; !err && start < c->type_cnt; start++) {
		uint32_t id = start;
		const struct btf_type *t = btf__type_by_id(c->btf, id);

		while (state[id] == UNSEEN && is_link(t)) {
			state[id] = WALKING;
			id = t->type;
			t = btf__type_by_id(c->btf, id);
		}
		c->id = start;
		if (state[id] == WALKING)
			err = bad_btf(c, "typedef or modifier loop through type", id);
		for (id = start; state[id] == WALKING; id = btf__type_by_id(c->btf, id)->type)
			state[id] = DONE;
	}
	free(state);
	return err;
}

static int check_btf_data(const void *data, size_t size)
{
	struct btf_checker c = { 0 };
	struct btf *btf = btf__new(data, size);
	int err = 0;

	if (!btf)
		return err_set(EGPU_EFORMAT, "corrupt BTF: libbpf cannot parse it");
	c.btf = btf;
	c.type_cnt = btf__type_cnt(btf);
	for (c.id = 1; !err && c.id < c.type_cnt; c.id++)
		err = check_type(&c, btf__type_by_id(btf, c.id));
	if (!err)
		err = check_chains(&c);
	btf__free(btf);
	return err;
}

Elf_Data *object_elf_section(Elf *elf, const char *want)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, want))
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

int object_check_btf(void *image, size_t len)
{
	Elf_Data *btf;
	Elf *elf;
	int err = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return err_set(EGPU_EFORMAT, "libelf: %s", elf_errmsg(-1));
	elf = elf_memory((char *)image, len);
	if (!elf)
		return 0; /* libbpf says what is wrong with the ELF */
	btf = object_elf_section(elf, ".BTF");
	if (btf && btf->d_buf && btf->d_size)
		err = check_btf_data(btf->d_buf, btf->d_size);
	elf_end(elf);
	return err;
}
