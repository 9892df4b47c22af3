/* SPDX-License-Identifier: MIT */
/* Finding types in an object's BTF (btf_value.h). */
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "object/btf_value.h"
#include "object/libbpf_read.h"

int object_btf_read(const void *image, size_t len, struct btf **out)
{
	char *copy = malloc(len ? len : 1);
	Elf_Data *d;
	Elf *elf;

	*out = NULL;
	if (!copy)
		return err_set(EGPU_ENOMEM, "out of memory copying %zu bytes", len);
	memcpy(copy, image, len);
	elf = elf_version(EV_CURRENT) != EV_NONE ? elf_memory(copy, len) : NULL;
	d = elf ? object_elf_section(elf, ".BTF") : NULL;
	if (d && d->d_buf && d->d_size)
		*out = btf__new(d->d_buf, d->d_size);
	elf_end(elf);
	free(copy);
	/* no BTF, or one libbpf will not take (NULL): values print as hex */
	return 0;
}

void object_btf_free(struct btf *btf)
{
	btf__free(btf);
}

static bool named_kind(const struct btf_type *t)
{
	return btf_is_composite(t) || btf_is_any_enum(t) || btf_is_typedef(t) ||
	       btf_is_int(t) || btf_is_float(t);
}

uint32_t object_btf_find(const struct btf *btf, const char *name)
{
	const char *want = name;
	bool tagged = false;

	if (!btf || !name)
		return 0;
	for (const char *tag = "struct \0union \0enum \0"; *tag; tag += strlen(tag) + 1)
		if (!strncmp(name, tag, strlen(tag)))
			want = name + strlen(tag), tagged = true;
	for (uint32_t id = 1; id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *n = btf__name_by_offset(btf, t->name_off);

		if (n && !strcmp(n, want) && named_kind(t) &&
		    (!tagged || btf_is_composite(t) || btf_is_any_enum(t)))
			return id;
	}
	return 0;
}

/* The type id of the struct defining .maps variable @map (NULL: any
 * map), or 0; @def: not this one (a struct defining another map). */
static uint32_t map_def_id(const struct btf *btf, const char *map, uint32_t def)
{
	int sec = btf__find_by_name_kind(btf, ".maps", BTF_KIND_DATASEC);
	const struct btf_type *t = sec > 0 ? btf__type_by_id(btf, sec) : NULL;
	const struct btf_var_secinfo *v = t ? btf_var_secinfos(t) : NULL;

	for (uint16_t i = 0; t && i < btf_vlen(t); i++) {
		const struct btf_type *var = btf__type_by_id(btf, v[i].type);
		int id = var && btf_is_var(var) ? btf__resolve_type(btf, var->type) : -1;

		if (id <= 0)
			continue;
		if (map ? !strcmp(btf__name_by_offset(btf, var->name_off), map) :
			  (uint32_t)id == def)
			return id;
	}
	return 0;
}

static const struct btf_type *map_def(const struct btf *btf, const char *map)
{
	uint32_t id = map_def_id(btf, map, 0);

	return id ? btf__type_by_id(btf, id) : NULL;
}

uint32_t object_btf_map_type(const struct btf *btf, const char *map, bool key)
{
	const struct btf_type *def = btf && map ? map_def(btf, map) : NULL;
	const struct btf_member *m;

	if (!def || !btf_is_struct(def))
		return 0;
	m = btf_members(def);
	for (uint16_t i = 0; i < btf_vlen(def); i++) {
		const struct btf_type *p = btf__type_by_id(btf, m[i].type);

		if (!strcmp(btf__name_by_offset(btf, m[i].name_off),
			    key ? "key" : "value") && p && btf_is_ptr(p))
			return p->type;
	}
	return 0;
}

uint32_t object_btf_struct_of_size(const struct btf *btf, size_t size)
{
	uint32_t found = 0;

	for (uint32_t id = 1; btf && id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		/* the structs defining maps hold no records */
		if (!btf_is_struct(t) || t->size != size || map_def_id(btf, NULL, id))
			continue;
		if (found)
			return 0;
		found = id;
	}
	return found;
}

int64_t object_btf_size(const struct btf *btf, uint32_t id)
{
	long long n = btf && id ? btf__resolve_size(btf, id) : -1;

	return n < 0 ? -1 : n;
}

void object_btf_type_name(const struct btf *btf, uint32_t id, char *buf,
			  size_t len)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const char *n = t ? btf__name_by_offset(btf, t->name_off) : NULL;

	snprintf(buf, len, "%s%s",
		 t && btf_is_struct(t) ? "struct " : t && btf_is_union(t) ? "union " : "",
		 n && *n ? n : "(anonymous)");
}
