/* SPDX-License-Identifier: MIT */
/*
 * Values typed by the object's BTF, in the public API: which type a name
 * or a ring's records have, and bytes printed as named fields
 * (object/btf_value.h does the work).
 */
#include <string.h>

#include "api/internal.h"
#include "object/btf_value.h"

uint32_t egpu_obj_find_type(const egpu_obj *obj, const char *name)
{
	uint32_t id = obj ? object_btf_find(obj->spec.btf, name) : 0;

	if (!id)
		err_set(EGPU_ENOENT, "no type '%s' in %s", name ? name : "(null)",
			obj && obj->spec.btf ? "the object's BTF" :
					       "an object without BTF");
	return id;
}

uint32_t egpu_map_record_type(const egpu_map *map, size_t size)
{
	const struct btf *btf = map ? map->obj->spec.btf : NULL;
	uint32_t id = object_btf_map_type(btf, map ? map->spec->name : NULL, false);

	if (id && object_btf_size(btf, id) == (int64_t)size)
		return id;
	return object_btf_struct_of_size(btf, size);
}

int egpu_obj_format(const egpu_obj *obj, uint32_t type_id, const void *data,
		    size_t size, bool json, char **text, size_t *len)
{
	const struct btf *btf = obj ? obj->spec.btf : NULL;
	int64_t want = object_btf_size(btf, type_id);
	struct strbuf sb;

	if (!text || !data)
		return err_set(EGPU_EINVAL, "egpu_obj_format: NULL data or text");
	if (want < 0)
		return err_set(EGPU_ENOENT, "no BTF type %u in the object", type_id);
	if (want != (int64_t)size)
		return err_set(EGPU_EINVAL, "%zu bytes given for a type of %lld",
			       size, (long long)want);
	sb_init(&sb);
	object_btf_format(btf, type_id, data, json, &sb);
	if (!sb_ok(&sb)) {
		sb_free(&sb);
		return err_set(EGPU_ENOMEM, "out of memory formatting a value");
	}
	*text = sb_detach(&sb, len);
	return 0;
}
