/* SPDX-License-Identifier: MIT */
/*
 * ELF objects: libbpf parses and links them (libbpf_read.c); this file turns
 * what it reports into a struct object_spec, refusing map types libegpu
 * does not implement (lib/core/map_types.c).
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/map_types.h"
#include "core/tlocal.h"
#include "object/btf_value.h"
#include "object/libbpf_read.h"
#include "object/spec.h"

static int map_type_unsupported(const struct object_map_desc *d)
{
	struct strbuf sb;
	int err;

	sb_init(&sb);
	for (size_t i = 0; i < map_type_cnt; i++)
		sb_printf(&sb, "%s%u %s", i ? ", " : "", map_types[i].type,
			  map_types[i].name);
	err = err_set(EGPU_ENOTSUP,
		      "map '%s': type %u is not supported (supported: %s)",
		      d->name, d->type, sb.len ? sb.buf : "");
	sb_free(&sb);
	return err;
}

/* Whether @len bytes at @p are all zero (early out at the first that is not). */
static bool all_zero(const uint8_t *p, size_t len)
{
	static const uint8_t zero[4096];

	for (size_t n; len; p += n, len -= n) {
		n = len < sizeof(zero) ? len : sizeof(zero);
		if (memcmp(p, zero, n))
			return false;
	}
	return true;
}

static int map_init(struct map_spec *m, const struct object_map_desc *d,
		    const struct map_type_info *rule)
{
	m->name = strdup(d->name);
	m->type = rule->impl;
	m->declared_type = rule->impl != d->type ? d->type : 0;
	m->host_memory = !!(rule->traits & MAP_T_HOST_MEMORY);
	m->key_size = d->key_size;
	m->value_size = d->value_size;
	m->max_entries = d->max_entries;
	m->flags = d->flags;
	m->readonly = d->readonly;
	if (!m->name)
		return err_set(EGPU_ENOMEM, "out of memory");
	/*
	 * Zero memory is zero: a .bss (or all-zero .data) keeps no copy.
	 * Read-only data keeps its bytes, where the verifier reads strings.
	 */
	if (!d->init || !d->init_len ||
	    (!d->readonly && all_zero(d->init, d->init_len)))
		return 0;
	m->init = malloc(d->init_len);
	if (!m->init)
		return err_set(EGPU_ENOMEM, "out of memory");
	memcpy(m->init, d->init, d->init_len);
	m->init_len = d->init_len;
	return 0;
}

static int add_map(const struct object_map_desc *d, void *arg)
{
	struct object_spec *spec = arg;
	const struct map_type_info *rule = map_type_find(d->type);
	struct map_spec *maps, *m;
	int err;

	if (!rule)
		return map_type_unsupported(d);
	if (d->type == EGPU_MAP_THREAD_LOCAL &&
	    (d->key_size != 4 ||
	     (uint64_t)d->max_entries * d->value_size > THREAD_LOCAL_MAX_BYTES))
		return err_set(EGPU_E2BIG,
			       "map '%s': a thread-local map takes 4-byte keys and at most %u bytes of values (they are kept in registers), not %u x %u",
			       d->name, THREAD_LOCAL_MAX_BYTES, d->max_entries,
			       d->value_size);
	maps = realloc(spec->maps, (spec->map_cnt + 1) * sizeof(*maps));
	if (!maps)
		return err_set(EGPU_ENOMEM, "out of memory");
	spec->maps = maps;
	m = &maps[spec->map_cnt];
	memset(m, 0, sizeof(*m));
	err = map_init(m, d, rule);
	if (err) {
		free(m->name);
		free(m->init);
		return err;
	}
	spec->map_cnt++;
	return 0;
}

static int add_prog(const struct object_prog_desc *d, void *arg)
{
	return object_spec_add_prog(arg, d->name, d->section, d->insns,
				    d->insn_cnt);
}

/*
 * The object name libbpf derives from a file name: no directories, nothing
 * from the first dot ("probe.bpf.o" -> "probe"). Global data maps are named
 * after it ("probe.rodata"), the same whether loaded from a file or memory.
 */
static char *libbpf_object_name(const char *name)
{
	const char *base = strrchr(name, '/');
	size_t n;

	base = base ? base + 1 : name;
	n = strcspn(base, ".");
	return n ? strndup(base, n) : strdup("obj");
}

static int check_elf_magic(const void *elf, size_t len)
{
	if (!len)
		return err_set(EGPU_EFORMAT, "the file is empty");
	if (!elf)
		return err_set(EGPU_EINVAL, "NULL image");
	if (len < SELFMAG || memcmp(elf, ELFMAG, SELFMAG))
		return err_set(EGPU_EFORMAT,
			       "not an ELF file (no ELF magic in the first bytes)");
	return 0;
}

/* Whether [off, off + size) lies inside the @len bytes of the file. */
static bool in_file(uint64_t off, uint64_t size, size_t len)
{
	return off <= len && size <= len - off;
}

/* The name of section @sh, or "?" where the section names are not there. */
static const char *section_name(const uint8_t *elf, size_t len,
				const Elf64_Ehdr *eh, const Elf64_Shdr *sh)
{
	Elf64_Shdr names;

	if (!eh->e_shstrndx || eh->e_shstrndx >= eh->e_shnum)
		return "?";
	memcpy(&names, elf + eh->e_shoff + eh->e_shstrndx * sizeof(names),
	       sizeof(names));
	if (!in_file(names.sh_offset, names.sh_size, len) ||
	    sh->sh_name >= names.sh_size ||
	    !memchr(elf + names.sh_offset + sh->sh_name, '\0',
		    names.sh_size - sh->sh_name))
		return "?";
	return (const char *)elf + names.sh_offset + sh->sh_name;
}

/*
 * A 64-bit little-endian ELF whose header, section table and sections lie
 * inside the file; libelf reports a truncated one as "invalid `Elf' handle".
 * Loaded sections fit a map value (global data becomes one; libbpf refuses
 * a larger one with "No such file or directory"). Headers are copied out:
 * the image may be unaligned.
 */
static int check_elf_shape(const uint8_t *elf, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh;

	if (len < sizeof(eh))
		return err_set(EGPU_EFORMAT,
			       "the file is truncated: %zu bytes, less than an ELF header (%zu)",
			       len, sizeof(eh));
	if (elf[EI_CLASS] != ELFCLASS64 || elf[EI_DATA] != ELFDATA2LSB)
		return err_set(EGPU_EFORMAT,
			       "not a 64-bit little-endian ELF file (eBPF objects from clang -target bpf are)");
	memcpy(&eh, elf, sizeof(eh));
	if (eh.e_shnum && eh.e_shentsize != sizeof(sh))
		return err_set(EGPU_EFORMAT, "ELF section headers of %u bytes (want %zu)",
			       eh.e_shentsize, sizeof(sh));
	if (!in_file(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(sh), len))
		return err_set(EGPU_EFORMAT,
			       "the file is truncated: its %u section headers end at byte %llu, the file has %zu bytes",
			       eh.e_shnum,
			       (unsigned long long)(eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(sh)),
			       len);
	for (unsigned i = 1; i < eh.e_shnum; i++) {
		memcpy(&sh, elf + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_type != SHT_NOBITS && !in_file(sh.sh_offset, sh.sh_size, len))
			return err_set(EGPU_EFORMAT,
				       "the file is truncated: section %u ends at byte %llu, the file has %zu bytes",
				       i, (unsigned long long)(sh.sh_offset + sh.sh_size), len);
		if ((sh.sh_flags & SHF_ALLOC) && sh.sh_size > UINT32_MAX)
			return err_set(EGPU_E2BIG,
				       "section %u '%s' is %llu bytes: global data becomes one map value, at most %u bytes",
				       i, section_name(elf, len, &eh, &sh),
				       (unsigned long long)sh.sh_size, UINT32_MAX);
	}
	return 0;
}

static int read_elf(const void *elf, size_t len, const char *name,
		    struct object_spec *spec)
{
	struct object_visitor v = { add_map, add_prog, spec };
	char *obj_name;
	int err;

	err = check_elf_magic(elf, len);
	if (!err)
		err = check_elf_shape(elf, len);
	if (err)
		return err;
	obj_name = libbpf_object_name(name);
	if (!obj_name)
		return err_set(EGPU_ENOMEM, "out of memory");
	err = object_read_libbpf(elf, len, obj_name, &v);
	free(obj_name);
	if (!err)
		err = object_read_lines(elf, len, spec);
	if (!err)
		err = object_btf_read(elf, len, &spec->btf);
	if (err)
		return err;
	if (!spec->prog_cnt)
		return err_set(EGPU_EFORMAT,
			       "no programs: put each program in its own SEC(\"...\") section, e.g. SEC(\"gpu/entry/KERNEL\")");
	return 0;
}

int object_parse_elf(const void *elf, size_t len, const char *name,
		     struct object_spec *out)
{
	struct object_spec spec = { 0 };
	int err;

	if (!name || !*name)
		name = "object";
	err = read_elf(elf, len, name, &spec);
	if (err) {
		err_prefix("object '%s'", name);
		object_spec_free(&spec);
		return err;
	}
	*out = spec;
	return 0;
}
