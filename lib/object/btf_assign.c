/* SPDX-License-Identifier: MIT */
/*
 * A JSON value written as bytes of a BTF type (btf_value.h): what
 * `egpu attach --set` and --set-file store into maps. Every number is
 * checked against its field's width and sign; errors name the field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "object/btf_value.h"

struct put {
	const struct btf *btf;
	char path[256]; /* the field being written, for messages */
};

static int assign(struct put *w, uint32_t id, const struct json *v,
		  uint8_t *p, uint32_t bit_off, uint32_t bits);

static int wrong(const struct put *w, const char *what, const struct json *v)
{
	return err_set(EGPU_EINVAL, "%s%s%s%s%s%s", w->path[0] ? "field '" : "",
		       w->path, w->path[0] ? "': " : "", what,
		       v && v->text ? ": " : "", v && v->text ? v->text : "");
}

static void write_bits(uint8_t *p, uint32_t off, uint32_t bits, uint64_t v)
{
	for (uint32_t i = 0; i < bits; i++) {
		uint8_t *b = &p[(off + i) / 8], m = 1u << ((off + i) % 8);

		*b = (v >> i) & 1 ? *b | m : *b & ~m;
	}
}

static int enumerator(const struct put *w, const struct btf_type *t,
		      const struct json *v, uint64_t *out)
{
	const char *why;

	if (v->kind == JSON_NUM) {
		why = json_integer(v, t->size * 8, btf_kflag(t), out);
		return why ? wrong(w, why, v) : 0;
	}
	for (uint16_t i = 0; (v->kind == JSON_WORD || v->kind == JSON_STR) &&
			     i < btf_vlen(t); i++) {
		uint32_t name = btf_is_enum(t) ? btf_enum(t)[i].name_off :
						 btf_enum64(t)[i].name_off;

		if (strcmp(btf__name_by_offset(w->btf, name), v->text))
			continue;
		*out = btf_is_enum(t) ? (uint64_t)(int64_t)btf_enum(t)[i].val :
					btf_enum64_value(&btf_enum64(t)[i]);
		return 0;
	}
	return wrong(w, "not an enumerator or a number", v);
}

static int array(struct put *w, const struct btf_type *t, const struct json *v,
		 uint8_t *p)
{
	const struct btf_array *a = btf_array(t);
	int64_t es = object_btf_size(w->btf, a->type);
	size_t n = strlen(w->path);
	int err = 0;

	if (v->kind == JSON_STR && es == 1) {
		if (strlen(v->text) > a->nelems)
			return wrong(w, "string longer than the array", v);
		memset(p, 0, a->nelems);
		memcpy(p, v->text, strlen(v->text));
		return 0;
	}
	if (v->kind != JSON_ARR)
		return wrong(w, "an array expected", v);
	if (v->n > a->nelems)
		return err_set(EGPU_EINVAL, "field '%s': %zu elements, the array has %u",
			       w->path[0] ? w->path : "value", v->n, a->nelems);
	for (size_t i = 0; !err && i < v->n; i++) {
		snprintf(w->path + n, sizeof(w->path) - n, "[%zu]", i);
		err = assign(w, a->type, &v->items[i], p + i * es, 0, 0);
	}
	w->path[n] = '\0';
	return err;
}

/* Member @name of composite @t, searched in anonymous members too: its
 * type and bit offset and size. */
static bool member(const struct btf *btf, const struct btf_type *t,
		   const char *name, uint32_t *type, uint32_t *off, uint32_t *bits)
{
	const struct btf_member *m = btf_members(t);

	for (uint16_t i = 0; i < btf_vlen(t); i++) {
		const char *n = btf__name_by_offset(btf, m[i].name_off);
		const struct btf_type *mt = btf__type_by_id(btf,
			btf__resolve_type(btf, m[i].type));

		if (n && !strcmp(n, name)) {
			*type = m[i].type;
			*off = btf_member_bit_offset(t, i);
			*bits = btf_member_bitfield_size(t, i);
			return true;
		}
		if ((!n || !*n) && mt && btf_is_composite(mt) &&
		    member(btf, mt, name, type, off, bits)) {
			*off += btf_member_bit_offset(t, i);
			return true;
		}
	}
	return false;
}

static int composite(struct put *w, const struct btf_type *t,
		     const struct json *v, uint8_t *p)
{
	size_t n = strlen(w->path);
	int err = 0;

	if (v->kind != JSON_OBJ)
		return wrong(w, "an object of fields expected", v);
	for (size_t i = 0; !err && i < v->n; i++) {
		uint32_t type, off, bits;

		snprintf(w->path + n, sizeof(w->path) - n, "%s%s", n ? "." : "",
			 v->keys[i]);
		if (!member(w->btf, t, v->keys[i], &type, &off, &bits))
			err = wrong(w, "no such field", NULL);
		else if (bits)
			err = assign(w, type, &v->items[i], p, off, bits);
		else
			err = assign(w, type, &v->items[i], p + off / 8, 0, 0);
	}
	w->path[n] = '\0';
	return err;
}

static int scalar(struct put *w, const struct btf_type *t, const struct json *v,
		  uint8_t *p, uint32_t bit_off, uint32_t bits)
{
	const char *why;
	uint64_t x;
	int err;

	if (btf_is_int(t)) {
		if (!bits)
			bits = btf_int_bits(t), bit_off += btf_int_offset(t);
		if (bits > 64)
			return wrong(w, "integers over 64 bits cannot be set", NULL);
		why = json_integer(v, bits, btf_int_encoding(t) & BTF_INT_SIGNED, &x);
		err = why ? wrong(w, why, v) : 0;
	} else {
		err = enumerator(w, t, v, &x);
		if (!bits)
			bits = t->size * 8;
	}
	if (!err)
		write_bits(p, bit_off, bits, x);
	return err;
}

static int floating(const struct put *w, const struct btf_type *t,
		    const struct json *v, uint8_t *p)
{
	char *end;
	double d;
	float f;

	if (v->kind != JSON_NUM || t->size > 8)
		return wrong(w, "a number expected", v);
	d = strtod(v->text, &end);
	if (*end)
		return wrong(w, "not a number", v);
	if (t->size == 4)
		f = (float)d, memcpy(p, &f, 4);
	else
		memcpy(p, &d, 8);
	return 0;
}

static int assign(struct put *w, uint32_t id, const struct json *v,
		  uint8_t *p, uint32_t bit_off, uint32_t bits)
{
	const struct btf_type *t = btf__type_by_id(w->btf,
						   btf__resolve_type(w->btf, id));

	if (!t)
		return wrong(w, "its type cannot be resolved", NULL);
	if (btf_is_int(t) || btf_is_any_enum(t))
		return scalar(w, t, v, p, bit_off, bits);
	if (btf_is_float(t))
		return floating(w, t, v, p);
	if (btf_is_array(t))
		return array(w, t, v, p);
	if (btf_is_composite(t))
		return composite(w, t, v, p);
	return wrong(w, "pointers and functions cannot be set", NULL);
}

int object_btf_assign(const struct btf *btf, uint32_t id, const struct json *v,
		      void *out)
{
	struct put w = { .btf = btf };

	return assign(&w, id, v, out, 0, 0);
}
