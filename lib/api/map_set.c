/* SPDX-License-Identifier: MIT */
/*
 * Seeding maps from text: "MAP[KEY]=VALUE" and a JSON object of maps,
 * keys and values typed by the map's BTF (__type(key/value, T)), or as
 * integers of the map's key and value sizes where it names no type.
 */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "core/json.h"
#include "core/map_types.h"
#include "object/btf_value.h"

/* @v as map @m's key (@key) or value, into @out (its size). */
static int put(const egpu_map *m, bool key, const struct json *v, void *out)
{
	const struct btf *btf = m->obj->spec.btf;
	uint32_t size = key ? m->spec->key_size : m->spec->value_size;
	uint32_t id = object_btf_map_type(btf, m->spec->name, key);
	const char *why;
	uint64_t x;

	if (id && object_btf_size(btf, id) == size)
		return object_btf_assign(btf, id, v, out);
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return err_set(EGPU_EINVAL,
			       "%u-byte %s without a BTF type (__type(%s, ...)): only integers of 1, 2, 4 or 8 bytes can be set",
			       size, key ? "key" : "value", key ? "key" : "value");
	why = json_integer(v, size * 8, false, &x);
	if (why)
		return err_set(EGPU_EINVAL, "%s%s%s", why, v->text ? ": " : "",
			       v->text ? v->text : "");
	memcpy(out, &x, size); /* little-endian, as the GPU */
	return 0;
}

static egpu_map *settable_map(const egpu_obj *obj, const char *name)
{
	egpu_map *m = egpu_obj_map(obj, name);
	struct strbuf names;

	if (m && !map_type_is_ring(m->spec->type))
		return m;
	if (m) {
		err_set(EGPU_EINVAL, "map '%s' is a ring: records cannot be set", name);
		return NULL;
	}
	sb_init(&names);
	for (size_t i = 0; i < obj->spec.map_cnt; i++)
		sb_printf(&names, "%s%s", i ? ", " : "", obj->spec.maps[i].name);
	err_set(EGPU_ENOENT, "no map '%s' (maps: %s)", name,
		sb_ok(&names) && names.len ? names.buf : "none");
	sb_free(&names);
	return NULL;
}

/* Store @value under @key in @m; the value starts from the entry's. */
static int set_entry(egpu_map *m, const struct json *key,
		     const struct json *value)
{
	uint32_t ks = m->spec->key_size, vs = m->spec->value_size;
	uint8_t *k = calloc(1, ks + 8), *v = calloc(egpu_map_values_per_key(m), vs + 8);
	int err = k && v ? 0 : err_set(EGPU_ENOMEM, "out of memory");

	if (!err && (err = put(m, true, key, k)))
		err_prefix("map '%s' key", m->spec->name);
	if (!err && egpu_map_values_per_key(m) == 1 && egpu_map_lookup(m, k, v))
		memset(v, 0, vs);
	if (!err && (err = put(m, false, value, v)))
		err_prefix("map '%s' value", m->spec->name);
	if (!err && (err = egpu_map_update(m, k, v, EGPU_ANY)))
		err_prefix("map '%s'", m->spec->name);
	free(k);
	free(v);
	return err;
}

/* The end of the bracketed text starting at @s ('['), or NULL. */
static const char *closing(const char *s)
{
	int depth = 0;
	bool quoted = false;

	for (; *s; s++) {
		if (*s == '"' && s[-1] != '\\')
			quoted = !quoted;
		else if (!quoted && (*s == '[' || *s == '{'))
			depth++;
		else if (!quoted && (*s == ']' || *s == '}') && !--depth)
			return s;
	}
	return NULL;
}

int egpu_obj_set(egpu_obj *obj, const char *assignment)
{
	const char *open = assignment ? strchr(assignment, '[') : NULL;
	const char *close = open ? closing(open) : NULL;
	struct json key = { 0 }, value = { 0 };
	char *name, *ktext;
	egpu_map *m;
	int err;

	if (!obj || !close || close[1] != '=' || open == assignment)
		return err_set(EGPU_EINVAL, "'%s': MAP[KEY]=VALUE expected",
			       assignment ? assignment : "(null)");
	name = strndup(assignment, open - assignment);
	ktext = strndup(open + 1, close - open - 1);
	m = name ? settable_map(obj, name) : NULL;
	err = !name || !ktext ? err_set(EGPU_ENOMEM, "out of memory") :
	      !m ? egpu_errcode() : 0;
	if (!err && (err = json_parse(ktext, true, &key)))
		err_prefix("map '%s' key", name);
	if (!err && (err = json_parse(close + 2, true, &value)))
		err_prefix("map '%s' value", name);
	if (!err)
		err = set_entry(m, &key, &value);
	if (err)
		err_prefix("'%s'", assignment);
	json_free(&key);
	json_free(&value);
	free(name);
	free(ktext);
	return err;
}

/* Map @m's entries: {"KEY": VALUE, ...} or [{"key": K, "value": V}, ...]. */
static int set_map(egpu_map *m, const struct json *entries)
{
	int err = 0;

	if (entries->kind == JSON_ARR) {
		for (size_t i = 0; !err && i < entries->n; i++) {
			const struct json *e = &entries->items[i];
			const struct json *k = json_get(e, "key"), *v = json_get(e, "value");

			err = k && v ? set_entry(m, k, v) :
			      err_set(EGPU_EINVAL, "map '%s': entry %zu: {\"key\": K, \"value\": V} expected",
				      m->spec->name, i);
		}
		return err;
	}
	if (entries->kind != JSON_OBJ)
		return err_set(EGPU_EINVAL, "map '%s': an object of KEY: VALUE or an array of {key, value} expected",
			       m->spec->name);
	for (size_t i = 0; !err && i < entries->n; i++) {
		struct json key;

		err = json_parse(entries->keys[i], true, &key);
		if (err) {
			err_prefix("map '%s' key \"%s\"", m->spec->name, entries->keys[i]);
			break;
		}
		err = set_entry(m, &key, &entries->items[i]);
		json_free(&key);
	}
	return err;
}

int egpu_obj_set_json(egpu_obj *obj, const char *text)
{
	struct json doc;
	int err;

	if (!obj || !text)
		return err_set(EGPU_EINVAL, "egpu_obj_set_json: NULL object or text");
	err = json_parse(text, false, &doc);
	if (!err && doc.kind != JSON_OBJ)
		err = err_set(EGPU_EINVAL, "a JSON object of maps expected: {\"MAP\": {\"KEY\": VALUE}}");
	for (size_t i = 0; !err && i < doc.n; i++) {
		egpu_map *m = settable_map(obj, doc.keys[i]);

		err = m ? set_map(m, &doc.items[i]) : egpu_errcode();
	}
	json_free(&doc);
	return err;
}
