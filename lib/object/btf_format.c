/* SPDX-License-Identifier: MIT */
/*
 * Bytes as named fields, after their BTF type (btf_value.h), on one line:
 * `{pid: 7, comm: "vec_add", at: [1, 2]}`, or the same as JSON. Char
 * arrays holding text print as strings, enums by name, bitfields by
 * value, pointers in hex, anonymous members inline.
 */
#include <ctype.h>
#include <string.h>

#include <bpf/btf.h>

#include "object/btf_value.h"

struct fmt {
	const struct btf *btf;
	struct strbuf *sb;
	bool json;
};

static void value(const struct fmt *f, uint32_t id, const uint8_t *p,
		  uint32_t bit_off, uint32_t bits);

/* @bits (1..64) little-endian bits at bit @off of @p. */
static uint64_t read_bits(const uint8_t *p, uint32_t off, uint32_t bits)
{
	uint64_t v = 0;

	for (uint32_t i = 0; i < bits; i++)
		v |= (uint64_t)((p[(off + i) / 8] >> ((off + i) % 8)) & 1) << i;
	return v;
}

static int64_t sign_extend(uint64_t v, uint32_t bits)
{
	return bits < 64 && (v >> (bits - 1)) & 1 ? (int64_t)(v | ~0ull << bits) :
						       (int64_t)v;
}

static void integer(const struct fmt *f, const struct btf_type *t,
		    const uint8_t *p, uint32_t off, uint32_t bits)
{
	uint32_t enc = btf_int_encoding(t);
	uint64_t v;

	if (!bits)
		bits = btf_int_bits(t), off += btf_int_offset(t);
	if (bits > 64) { /* __int128: hex */
		sb_adds(f->sb, f->json ? "\"0x" : "0x");
		for (uint32_t i = bits / 8; i-- > 0;)
			sb_printf(f->sb, "%02x", p[off / 8 + i]);
		sb_adds(f->sb, f->json ? "\"" : "");
		return;
	}
	v = read_bits(p, off, bits);
	if (enc & BTF_INT_BOOL)
		sb_adds(f->sb, v ? "true" : "false");
	else if (enc & BTF_INT_SIGNED)
		sb_printf(f->sb, "%lld", (long long)sign_extend(v, bits));
	else
		sb_printf(f->sb, "%llu", (unsigned long long)v);
}

static void enumeration(const struct fmt *f, const struct btf_type *t,
			const uint8_t *p, uint32_t off, uint32_t bits)
{
	uint64_t v = read_bits(p, off, bits ? bits : t->size * 8);

	for (uint16_t i = 0; i < btf_vlen(t); i++) {
		uint32_t name_off = btf_is_enum(t) ? btf_enum(t)[i].name_off :
						     btf_enum64(t)[i].name_off;
		uint64_t e = btf_is_enum(t) ? (uint64_t)(uint32_t)btf_enum(t)[i].val :
					      btf_enum64_value(&btf_enum64(t)[i]);

		if (e == v || (t->size == 4 && (uint32_t)e == (uint32_t)v)) {
			sb_printf(f->sb, f->json ? "\"%s\"" : "%s",
				  btf__name_by_offset(f->btf, name_off));
			return;
		}
	}
	sb_printf(f->sb, "%llu", (unsigned long long)v);
}

/* Whether array @a of @n bytes is text: a char array, printable up to a
 * NUL (or its end). */
static bool is_text(const struct fmt *f, const struct btf_array *a,
		    const uint8_t *p)
{
	const struct btf_type *e = btf__type_by_id(f->btf,
						   btf__resolve_type(f->btf, a->type));
	uint32_t i;

	const char *name = e ? btf__name_by_offset(f->btf, e->name_off) : NULL;

	/* clang marks char by its name, not always by BTF_INT_CHAR */
	if (!e || !btf_is_int(e) || e->size != 1 ||
	    !((btf_int_encoding(e) & BTF_INT_CHAR) || (name && strstr(name, "char"))))
		return false;
	for (i = 0; i < a->nelems && p[i]; i++)
		if (!isprint(p[i]))
			return false;
	return i > 0 || a->nelems == 0;
}

static void text(const struct fmt *f, const uint8_t *p, uint32_t n)
{
	sb_adds(f->sb, "\"");
	for (uint32_t i = 0; i < n && p[i]; i++)
		sb_printf(f->sb, p[i] == '"' || p[i] == '\\' ? "\\%c" : "%c", p[i]);
	sb_adds(f->sb, "\"");
}

static void array(const struct fmt *f, const struct btf_type *t,
		  const uint8_t *p)
{
	const struct btf_array *a = btf_array(t);
	int64_t es = object_btf_size(f->btf, a->type);

	if (is_text(f, a, p)) {
		text(f, p, a->nelems);
		return;
	}
	sb_adds(f->sb, "[");
	for (uint32_t i = 0; es >= 0 && i < a->nelems; i++) {
		sb_adds(f->sb, i ? (f->json ? "," : ", ") : "");
		value(f, a->type, p + i * es, 0, 0);
	}
	sb_adds(f->sb, "]");
}

/* The members of @t, inline (no braces); @first: none printed yet. */
static void members(const struct fmt *f, const struct btf_type *t,
		    const uint8_t *p, bool *first)
{
	const struct btf_member *m = btf_members(t);

	for (uint16_t i = 0; i < btf_vlen(t); i++) {
		const char *name = btf__name_by_offset(f->btf, m[i].name_off);
		uint32_t off = btf_member_bit_offset(t, i);
		uint32_t bits = btf_member_bitfield_size(t, i);
		const struct btf_type *mt = btf__type_by_id(f->btf,
			btf__resolve_type(f->btf, m[i].type));

		if ((!name || !*name) && mt && btf_is_composite(mt)) {
			members(f, mt, p + off / 8, first);
			continue;
		}
		sb_adds(f->sb, *first ? "" : f->json ? "," : ", ");
		*first = false;
		sb_printf(f->sb, f->json ? "\"%s\":" : "%s: ", name ? name : "");
		if (bits)
			value(f, m[i].type, p, off, bits);
		else
			value(f, m[i].type, p + off / 8, 0, 0);
	}
}

/* @bits: a bitfield of @bits at bit @bit_off of @p; else the whole value
 * at @p. */
static void value(const struct fmt *f, uint32_t id, const uint8_t *p,
		  uint32_t bit_off, uint32_t bits)
{
	const struct btf_type *t = btf__type_by_id(f->btf,
						   btf__resolve_type(f->btf, id));
	bool first = true;

	if (!t) {
		sb_adds(f->sb, "null");
	} else if (btf_is_int(t)) {
		integer(f, t, p, bit_off, bits);
	} else if (btf_is_any_enum(t)) {
		enumeration(f, t, p, bit_off, bits);
	} else if (btf_is_ptr(t)) {
		sb_printf(f->sb, f->json ? "%llu" : "0x%llx",
			  (unsigned long long)read_bits(p, 0, 64));
	} else if (btf_is_float(t) && (t->size == 4 || t->size == 8)) {
		float x;
		double d;

		if (t->size == 4)
			memcpy(&x, p, 4), d = x;
		else
			memcpy(&d, p, 8);
		sb_printf(f->sb, "%.9g", d);
	} else if (btf_is_array(t)) {
		array(f, t, p);
	} else if (btf_is_composite(t)) {
		sb_adds(f->sb, "{");
		members(f, t, p, &first);
		sb_adds(f->sb, "}");
	} else {
		sb_adds(f->sb, "null");
	}
}

void object_btf_format(const struct btf *btf, uint32_t id, const void *data,
		       bool json, struct strbuf *sb)
{
	struct fmt f = { btf, sb, json };

	value(&f, id, data, 0, 0);
}
