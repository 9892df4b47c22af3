/* SPDX-License-Identifier: MIT */
/*
 * ELF parsing, map definitions and linking through libbpf.
 *
 * bpf_object__open_mem() parses the ELF, BTF and .maps but leaves
 * instructions unrelocated. Linking is done by libbpf's generated-loader
 * mode: after bpf_object__gen_loader(), bpf_object__load() makes no bpf()
 * system call (no kernel, no privileges needed), appends the .text
 * subprograms each program calls, fixes call offsets and leaves every map
 * reference as lddw BPF_PSEUDO_MAP_IDX / BPF_PSEUDO_MAP_IDX_VALUE with the
 * map's index, which is exactly the linked form core/bpf.h describes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "core/core.h"
#include "object/libbpf_read.h"

/*
 * libbpf reports why it failed only through its print callback. The first
 * warning printed while this thread reads an object is kept for the error
 * message. libbpf is linked statically, so the callback is ours alone.
 */
static _Thread_local char first_warning[256];
static _Thread_local bool capturing;
static pthread_once_t print_once = PTHREAD_ONCE_INIT;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	size_t n;

	if (level != LIBBPF_WARN || !capturing || first_warning[0])
		return 0;
	vsnprintf(first_warning, sizeof(first_warning), fmt, ap);
	n = strlen(first_warning);
	while (n && (first_warning[n - 1] == '\n' || first_warning[n - 1] == ' '))
		first_warning[--n] = '\0';
	return 0;
}

/* Stands for stderr in our copy of libbpf.a (lib/object/CMakeLists.txt). */
FILE *object_libbpf_stderr;

/*
 * Stands for realloc in our copy of libbpf.a: never one that frees and
 * returns NULL for 0 bytes. libbpf 1.1 (Debian 12) takes that NULL for a
 * failure and keeps the freed pointer, which bpf_object__close frees again
 * (upstream's "Fix realloc API handling in zero-sized edge cases", 1.3):
 * a crafted object aborted the process (tests/fuzz/regress/elf).
 */
void *object_libbpf_realloc(void *ptr, size_t size)
{
	return realloc(ptr, size ? size : 1);
}

static void install_print(void)
{
	object_libbpf_stderr = stderr;
	libbpf_set_print(libbpf_print);
}

static int libbpf_failed(int err, const char *what)
{
	if (first_warning[0])
		return err_set(EGPU_EFORMAT, "%s: %s", what, first_warning);
	return err_set(EGPU_EFORMAT, "%s: %s", what, strerror(err < 0 ? -err : err));
}

/* Extern variables name kernel configuration; a GPU has none. */
static int check_externs(const struct bpf_object *obj)
{
	if (bpf_object__find_map_by_name(obj, ".kconfig"))
		return err_set(EGPU_ENOTSUP,
			       "extern .kconfig variables are not supported");
	return 0;
}

/*
 * Whether internal map @m holds a .bss (or .bss.NAME) section, which starts
 * zeroed. libbpf makes such a map only of an SHT_NOBITS section so named,
 * and names it ".bss.NAME", or the object's name cut short then ".bss";
 * the BTF DATASEC of its value says the same when the BTF is whole. Never
 * found out by reading the bytes: libbpf's mapping of them is shared
 * memory, which a read allocates (4 GB for a fuzzed 4 GB .bss whose BTF
 * was broken).
 */
static bool is_bss(const struct bpf_object *obj, const struct bpf_map *m)
{
	const struct btf *btf = bpf_object__btf(obj);
	const char *name = bpf_map__name(m), *sec;
	const struct btf_type *t;
	size_t n = name ? strlen(name) : 0;

	if (n && (!strncmp(name, ".bss.", 5) ||
		  (name[0] != '.' && n >= 4 && !strcmp(name + n - 4, ".bss"))))
		return true;
	if (!btf || !bpf_map__btf_value_type_id(m))
		return false;
	t = btf__type_by_id(btf, bpf_map__btf_value_type_id(m));
	if (!t || !btf_is_datasec(t))
		return false;
	sec = btf__name_by_offset(btf, t->name_off);
	return sec && (!strcmp(sec, ".bss") || !strncmp(sec, ".bss.", 5));
}

static int visit_maps(struct bpf_object *obj, const struct object_visitor *v)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		struct object_map_desc d = {
			.name = bpf_map__name(m),
			.type = bpf_map__type(m),
			.key_size = bpf_map__key_size(m),
			.value_size = bpf_map__value_size(m),
			.max_entries = bpf_map__max_entries(m),
			.flags = bpf_map__map_flags(m),
			.global_data = bpf_map__is_internal(m),
		};
		int err;

		if (d.global_data) {
			/* libbpf's own flags (mmapable, read-only) */
			d.readonly = d.flags & BPF_F_RDONLY_PROG;
			d.flags = 0;
			/* A .bss is zero: no initial bytes to read (reading
			 * libbpf's shared mapping of it would allocate it). */
			if (!is_bss(obj, m))
				d.init = bpf_map__initial_value(m, &d.init_len);
		}
		err = v->map(&d, v->arg);
		if (err)
			return err;
	}
	return 0;
}

static int link_programs(struct bpf_object *obj)
{
	LIBBPF_OPTS(gen_loader_opts, gen);
	struct bpf_program *p;
	struct bpf_map *m;
	int err;

	/*
	 * The loader libbpf generates would carry a copy of every global
	 * data map's bytes (4 GB for a 4 GB .bss); they were read already
	 * (visit_maps), and linking needs only the maps' indices.
	 */
	bpf_object__for_each_map(m, obj)
		if (bpf_map__is_internal(m) && bpf_map__value_size(m) > 8)
			bpf_map__set_value_size(m, 8);
	bpf_object__for_each_program(p, obj) {
		bpf_program__set_autoload(p, true);
		/* Nothing reaches a kernel; any type lets libbpf go on. */
		if (bpf_program__type(p) == BPF_PROG_TYPE_UNSPEC)
			bpf_program__set_type(p, BPF_PROG_TYPE_SOCKET_FILTER);
	}
	err = bpf_object__gen_loader(obj, &gen);
	if (err)
		return libbpf_failed(err, "cannot prepare linking");
	err = bpf_object__load(obj);
	if (err)
		return libbpf_failed(err, "cannot link programs");
	return 0;
}

static int visit_progs(struct bpf_object *obj, const struct object_visitor *v)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj) {
		struct object_prog_desc d = {
			.name = bpf_program__name(p),
			.section = bpf_program__section_name(p),
			.insns = bpf_program__insns(p),
			.insn_cnt = bpf_program__insn_cnt(p),
		};
		int err = v->prog(&d, v->arg);

		if (err)
			return err;
	}
	return 0;
}

static int read_object(void *elf, size_t len, const char *obj_name,
		       const struct object_visitor *v)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = obj_name);
	struct bpf_object *obj;
	int err;

	err = object_check_btf(elf, len);
	if (err)
		return err;
	obj = bpf_object__open_mem(elf, len, &opts);
	if (!obj)
		return libbpf_failed(errno, "not a valid BPF object");
	err = check_externs(obj);
	if (!err)
		err = visit_maps(obj, v);
	if (!err)
		err = link_programs(obj);
	if (!err)
		err = visit_progs(obj, v);
	bpf_object__close(obj);
	return err;
}

int object_read_libbpf(const void *elf, size_t len, const char *obj_name,
		       const struct object_visitor *v)
{
	void *copy;
	int err;

	pthread_once(&print_once, install_print);
	/* libelf may convert in place and wants alignment: give it a copy. */
	copy = malloc(len);
	if (!copy)
		return err_set(EGPU_ENOMEM, "out of memory copying %zu bytes",
			       len);
	memcpy(copy, elf, len);
	first_warning[0] = '\0';
	capturing = true;
	err = read_object(copy, len, obj_name, v);
	capturing = false;
	free(copy);
	return err;
}
