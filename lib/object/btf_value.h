/* SPDX-License-Identifier: MIT */
/*
 * Values typed by an object's BTF: finding the type of a map's keys and
 * values or of a record, printing bytes as named fields (text or JSON),
 * and writing a JSON value (core/json.h) as bytes of a type. Type ids are
 * the BTF's; 0 means none. The BTF was checked when the object was opened
 * (object_check_btf), so these walks stay in bounds.
 */
#ifndef EGPU_OBJECT_BTF_VALUE_H
#define EGPU_OBJECT_BTF_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "core/json.h"

struct btf; /* libbpf's, behind this interface */

/* The .BTF of ELF image @elf into *@out; NULL there when it has none. */
int object_btf_read(const void *elf, size_t len, struct btf **out);
void object_btf_free(struct btf *btf);

/* A named struct, union, enum, typedef or integer ("struct X" too). */
uint32_t object_btf_find(const struct btf *btf, const char *name);
/* The key (@key) or value type a .maps definition names with __type(). */
uint32_t object_btf_map_type(const struct btf *btf, const char *map, bool key);
/* The one struct of @size bytes, 0 when there are none or several. */
uint32_t object_btf_struct_of_size(const struct btf *btf, size_t size);
/* Bytes of type @id, or -1. */
int64_t object_btf_size(const struct btf *btf, uint32_t id);
/* "struct X", "u32", ... into @buf. */
void object_btf_type_name(const struct btf *btf, uint32_t id, char *buf,
			  size_t len);

/* Append the value of type @id at @data (its size) to @sb. */
void object_btf_format(const struct btf *btf, uint32_t id, const void *data,
		       bool json, struct strbuf *sb);
/*
 * Write @v as type @id into @out (its size; fields not named stay as they
 * are). Integers and enums take numbers (range-checked) or, relaxed, an
 * enumerator's name; structs and unions an object of fields; arrays an
 * array (char arrays also a string). EGPU_EINVAL naming the field.
 */
int object_btf_assign(const struct btf *btf, uint32_t id, const struct json *v,
		      void *out);

#endif
