/* SPDX-License-Identifier: MIT */
/* ELF objects compiled from the bpf/ sources at build time. */
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>

#include <bpf/btf.h>

#include "core/map_types.h"
#include "egpu/ctx.h"
#include "object_test.h"

#define BPF_OBJ(name) EGPU_TEST_BUILD "/" name ".bpf.o"

static int parse_file(const char *path, const char *name, int abi,
		      struct object_spec *spec)
{
	size_t len;
	void *elf = tu_read_file(path, &len);
	int err = object_parse_elf(elf, len, name, spec);

	if (!err && (err = verifier_check_object(spec, abi))) {
		err_prefix("object '%s'", name);
		object_spec_free(spec);
	}

	free(elf);
	return err;
}

static const struct prog_spec *prog(const struct object_spec *s,
				    const char *name)
{
	for (size_t i = 0; i < s->prog_cnt; i++)
		if (!strcmp(s->progs[i].name, name))
			return &s->progs[i];
	ck_abort_msg("no program '%s'", name);
	return NULL;
}

static size_t map_index(const struct object_spec *s, const char *name)
{
	for (size_t i = 0; i < s->map_cnt; i++)
		if (!strcmp(s->maps[i].name, name))
			return i;
	ck_abort_msg("no map '%s'", name);
	return 0;
}

/* ---- programs and attach points ---- */

static void assert_prog(const struct object_spec *s, const char *name,
			const char *section, int attach, const char *kernel)
{
	const struct prog_spec *p = prog(s, name);

	ck_assert_str_eq(p->section, section);
	ck_assert_int_eq(p->attach, attach);
	ck_assert_str_eq(p->kernel, kernel);
	ck_assert_uint_gt(p->insn_cnt, 1);
}

START_TEST(programs_and_sections)
{
	struct object_spec s;

	ck_assert_ok(parse_file(BPF_OBJ("progs"), "dir/progs.bpf.o",
				EGPU_HELPERS_GPU, &s));
	ck_assert_uint_eq(s.prog_cnt, 7);
	assert_prog(&s, "on_entry", "gpu/entry/vecAdd", EGPU_ATTACH_ENTRY, "vecAdd");
	assert_prog(&s, "on_exit", "gpu/exit/_Z9*", EGPU_ATTACH_EXIT, "_Z9*");
	assert_prog(&s, "on_mem", "gpu/mem/*", EGPU_ATTACH_MEM, "*");
	assert_prog(&s, "kp", "kprobe/_Z9vectorAddPKfS0_Pf", EGPU_ATTACH_ENTRY,
		    "_Z9vectorAddPKfS0_Pf");
	assert_prog(&s, "krp", "kretprobe/reduce", EGPU_ATTACH_EXIT, "reduce");
	assert_prog(&s, "memcap", "kprobe/__memcapture", EGPU_ATTACH_MEM, "*");
	assert_prog(&s, "sock", "socket", EGPU_ATTACH_NONE, "");
	object_spec_free(&s);
	ck_assert_uint_eq(s.prog_cnt, 0);
	ck_assert_ptr_null(s.progs);
}
END_TEST

/* ---- maps ---- */

static void assert_map(const struct object_spec *s, const char *name,
		       uint32_t type, uint32_t key, uint32_t value,
		       uint32_t max, uint32_t flags)
{
	const struct map_spec *m = &s->maps[map_index(s, name)];

	ck_assert_uint_eq(m->type, type);
	ck_assert_uint_eq(m->key_size, key);
	ck_assert_uint_eq(m->value_size, value);
	ck_assert_uint_eq(m->max_entries, max);
	ck_assert_uint_eq(m->flags, flags);
	ck_assert_ptr_null(m->init);
	ck_assert_int_eq(m->readonly, 0);
}

START_TEST(declared_maps)
{
	struct object_spec s;

	ck_assert_ok(parse_file(BPF_OBJ("progs"), "progs.bpf.o",
				EGPU_HELPERS_GPU, &s));
	ck_assert_uint_eq(s.map_cnt, 11);
	assert_map(&s, "counts", EGPU_MAP_HASH, 4, 8, 64, 1);
	assert_map(&s, "arr", EGPU_MAP_ARRAY, 4, 4, 8, 0);
	assert_map(&s, "perf", EGPU_MAP_PERF_EVENT_ARRAY, 4, 4, 2, 0);
	assert_map(&s, "pcpu", EGPU_MAP_PERCPU_ARRAY, 4, 8, 1, 0);
	assert_map(&s, "rb", EGPU_MAP_RINGBUF, 0, 0, 4096, 0);
	assert_map(&s, "perthread", EGPU_MAP_PERTHREAD_ARRAY, 4, 8, 4, 0);
	assert_map(&s, "garr", EGPU_MAP_GPU_ARRAY, 4, 16, 16, 0);
	assert_map(&s, "grb", EGPU_MAP_GPU_RINGBUF, 4, 16, 32, 0);
	object_spec_free(&s);
}
END_TEST

/* Offset of the first occurrence of @v (@n bytes) in the map's init bytes. */
static size_t init_offset(const struct map_spec *m, const void *v, size_t n)
{
	const uint8_t *b = m->init;

	for (size_t off = 0; off + n <= m->init_len; off++)
		if (!memcmp(b + off, v, n))
			return off;
	ck_abort_msg("map '%s': value not in its initial bytes", m->name);
	return 0;
}

START_TEST(global_data)
{
	struct object_spec s;
	const struct map_spec *data, *ro, *bss;
	uint64_t first = 0x1122334455667788ULL;
	uint32_t second = 0xabcd0042, rov = 0x0badf00d;

	ck_assert_ok(parse_file(BPF_OBJ("progs"), "/some/where/progs.bpf.o",
				EGPU_HELPERS_GPU, &s));
	data = &s.maps[map_index(&s, "progs.data")];
	ro = &s.maps[map_index(&s, "progs.rodata")];
	bss = &s.maps[map_index(&s, "progs.bss")];
	for (const struct map_spec *m = data; m; m = m == data ? ro : m == ro ? bss : NULL) {
		ck_assert_uint_eq(m->type, EGPU_MAP_ARRAY);
		ck_assert_uint_eq(m->key_size, 4);
		ck_assert_uint_eq(m->max_entries, 1);
		ck_assert_uint_eq(m->flags, 0);
		/* a .bss is zero: no initial bytes are kept */
		ck_assert_uint_eq(m->init_len, m == bss ? 0 : m->value_size);
		ck_assert(m == bss ? !m->init : m->init != NULL);
	}
	ck_assert_uint_eq(data->value_size, 12); /* u64 + u32 */
	init_offset(data, &first, sizeof(first));
	init_offset(data, &second, sizeof(second));
	init_offset(ro, &rov, sizeof(rov));
	ck_assert_int_eq(data->readonly, 0);
	ck_assert_int_eq(ro->readonly, 1);
	ck_assert_int_eq(bss->readonly, 0);
	ck_assert_uint_eq(bss->value_size, 8);
	for (size_t i = 0; i < bss->init_len; i++)
		ck_assert_uint_eq(((uint8_t *)bss->init)[i], 0);
	object_spec_free(&s);
}
END_TEST

/* ---- relocations ---- */

/* The lddw of @p with this source form and map index, or abort. */
static const struct bpf_insn *find_lddw(const struct prog_spec *p,
					int src, size_t map)
{
	for (size_t i = 0; i + 1 < p->insn_cnt; i++) {
		const struct bpf_insn *in = &p->insns[i];

		if (bpf_is_lddw(in) && in->src_reg == src &&
		    (size_t)in->imm == map)
			return in;
	}
	ck_abort_msg("prog '%s': no lddw src %d map %zu", p->name, src, map);
	return NULL;
}

START_TEST(map_relocations)
{
	struct object_spec s;
	const struct prog_spec *entry, *exit_p;
	const struct bpf_insn *in;
	size_t data, ro, bss;
	uint32_t second = 0xabcd0042, rov = 0x0badf00d;

	ck_assert_ok(parse_file(BPF_OBJ("progs"), "progs.bpf.o",
				EGPU_HELPERS_GPU, &s));
	entry = prog(&s, "on_entry");
	exit_p = prog(&s, "on_exit");
	data = map_index(&s, "progs.data");
	ro = map_index(&s, "progs.rodata");
	bss = map_index(&s, "progs.bss");

	in = find_lddw(entry, BPF_PSEUDO_MAP_IDX, map_index(&s, "counts"));
	ck_assert_int_eq(in[1].imm, 0);
	in = find_lddw(entry, BPF_PSEUDO_MAP_IDX_VALUE, data);
	ck_assert_int_eq(in[1].imm,
			 init_offset(&s.maps[data], &second, sizeof(second)));
	in = find_lddw(entry, BPF_PSEUDO_MAP_IDX_VALUE, ro);
	ck_assert_int_eq(in[1].imm,
			 init_offset(&s.maps[ro], &rov, sizeof(rov)));
	find_lddw(entry, BPF_PSEUDO_MAP_IDX_VALUE, bss);
	find_lddw(exit_p, BPF_PSEUDO_MAP_IDX, map_index(&s, "perthread"));
	find_lddw(prog(&s, "on_mem"), BPF_PSEUDO_MAP_IDX, map_index(&s, "rb"));
	find_lddw(prog(&s, "kp"), BPF_PSEUDO_MAP_IDX, map_index(&s, "garr"));
	find_lddw(prog(&s, "krp"), BPF_PSEUDO_MAP_IDX, map_index(&s, "arr"));
	find_lddw(prog(&s, "memcap"), BPF_PSEUDO_MAP_IDX, map_index(&s, "pcpu"));
	find_lddw(prog(&s, "sock"), BPF_PSEUDO_MAP_IDX, map_index(&s, "perf"));
	find_lddw(prog(&s, "sock"), BPF_PSEUDO_MAP_IDX, map_index(&s, "grb"));
	/* no map reference is left in the file descriptor forms */
	for (size_t i = 0; i < s.prog_cnt; i++)
		for (size_t j = 0; j < s.progs[i].insn_cnt; j++) {
			in = &s.progs[i].insns[j];
			ck_assert(!bpf_is_lddw(in) || in->src_reg == 0 ||
				  in->src_reg == BPF_PSEUDO_MAP_IDX ||
				  in->src_reg == BPF_PSEUDO_MAP_IDX_VALUE);
		}
	object_spec_free(&s);
}
END_TEST

/* ---- subprograms ---- */

/* Times an ALU instruction with immediate @imm occurs in @p. */
static int count_imm(const struct prog_spec *p, int32_t imm)
{
	int n = 0;

	for (size_t i = 0; i < p->insn_cnt; i++)
		if ((BPF_CLASS(p->insns[i].code) == BPF_ALU ||
		     BPF_CLASS(p->insns[i].code) == BPF_ALU64) &&
		    BPF_SRC(p->insns[i].code) == BPF_K && p->insns[i].imm == imm)
			n++;
	return n;
}

/* Does the function starting at @start contain ALU immediate @imm? */
static int body_has_imm(const struct prog_spec *p, size_t start,
			int32_t imm)
{
	for (size_t i = start; i < p->insn_cnt; i++) {
		if (p->insns[i].code == (BPF_JMP | BPF_EXIT))
			return 0;
		if (BPF_CLASS(p->insns[i].code) == BPF_ALU64 &&
		    BPF_SRC(p->insns[i].code) == BPF_K && p->insns[i].imm == imm)
			return 1;
	}
	return 0;
}

/* Entry of the called function whose body has @imm, scanning calls in
 * [from, to); -1 if none. */
static long callee_with(const struct prog_spec *p, size_t from, size_t to,
			int32_t imm)
{
	for (size_t i = from; i < to && i < p->insn_cnt; i++) {
		const struct bpf_insn *in = &p->insns[i];
		long t = (long)i + in->imm + 1;

		if (in->code != (BPF_JMP | BPF_CALL) ||
		    in->src_reg != BPF_PSEUDO_CALL)
			continue;
		ck_assert_int_ge(t, 0);
		ck_assert_int_lt(t, p->insn_cnt);
		if (body_has_imm(p, t, imm))
			return t;
	}
	return -1;
}

static size_t first_exit(const struct prog_spec *p, size_t from)
{
	while (p->insns[from].code != (BPF_JMP | BPF_EXIT))
		from++;
	return from;
}

START_TEST(subprogram_linking)
{
	struct object_spec s;
	const struct prog_spec *two, *shares;
	long mid, leaf, other;

	ck_assert_ok(parse_file(BPF_OBJ("subprogs"), "subprogs.bpf.o",
				EGPU_HELPERS_GPU, &s));
	ck_assert_uint_eq(s.prog_cnt, 2); /* .text functions are no programs */
	two = prog(&s, "two_calls");
	shares = prog(&s, "shares");

	/* the main body calls mid and other, appended after it */
	mid = callee_with(two, 0, first_exit(two, 0), 2222);
	other = callee_with(two, 0, first_exit(two, 0), 3333);
	ck_assert_int_gt(mid, (long)first_exit(two, 0));
	ck_assert_int_gt(other, (long)first_exit(two, 0));
	/* mid calls leaf, appended as well */
	leaf = callee_with(two, mid, first_exit(two, mid), 1111);
	ck_assert_int_gt(leaf, 0);
	/* each subprogram appended exactly once */
	ck_assert_int_eq(count_imm(two, 1111), 1);
	ck_assert_int_eq(count_imm(two, 2222), 1);
	ck_assert_int_eq(count_imm(two, 3333), 1);

	/* the second program gets its own copy of the shared leaf only */
	ck_assert_int_gt(callee_with(shares, 0, first_exit(shares, 0), 1111),
			 (long)first_exit(shares, 0));
	ck_assert_int_eq(count_imm(shares, 1111), 1);
	ck_assert_int_eq(count_imm(shares, 2222), 0);
	ck_assert_int_eq(count_imm(shares, 3333), 0);
	object_spec_free(&s);
}
END_TEST

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* Every helper the author header declares is known, with its number. */
START_TEST(header_helpers)
{
	static const int32_t want[] = {
		1, 2, 3, 5, 6, 14, 25, 130, 131, 131, 132, 133,
		501, 502, 503, 504, 505, 506, 507, 508, 509, 510, 511,
	};
	int32_t got[ARRAY_SIZE(want)];
	struct object_spec s;
	const struct prog_spec *p;
	size_t n = 0;

	ck_assert_ok(parse_file(BPF_OBJ("helpers"), "helpers.bpf.o",
				EGPU_HELPERS_GPU, &s));
	ck_assert_uint_eq(s.maps[map_index(&s, "h")].type, EGPU_MAP_HASH);
	p = prog(&s, "all_helpers");
	for (size_t i = 0; i < p->insn_cnt; i++) {
		if (p->insns[i].code != (BPF_JMP | BPF_CALL))
			continue;
		ck_assert_uint_lt(n, ARRAY_SIZE(want));
		got[n++] = p->insns[i].imm;
	}
	ck_assert_uint_eq(n, ARRAY_SIZE(want));
	qsort(got, n, sizeof(got[0]), cmp_i32);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(got[i], want[i]);
	object_spec_free(&s);
}
END_TEST

/* ---- failures ---- */

START_TEST(unsupported_map_type)
{
	struct object_spec s;

	ck_assert_fails(parse_file(BPF_OBJ("bad_map_type"), "bad.o",
				   EGPU_HELPERS_GPU, &s),
			EGPU_ENOTSUP, "object 'bad.o': map 'lru_hash': type 9 is not supported (supported: 1 hash, 2 array, 4 perf_event_array, 6 percpu_array, 27 ringbuf, 1501 gpu_hash, 1502 perthread_array, 1503 gpu_array, 1504 gpu_kernel_shared_array, 1512 perthread_array_host, 1513 gpu_array_host, 1527 gpu_ringbuf, 4096 thread_local, 4097 sm_array)");
}
END_TEST

START_TEST(no_programs)
{
	struct object_spec s;

	ck_assert_fails(parse_file(BPF_OBJ("no_progs"), "np.o",
				   EGPU_HELPERS_GPU, &s),
			EGPU_EFORMAT, "object 'np.o': no programs");
}
END_TEST

START_TEST(unknown_helper)
{
	struct object_spec s;

	ck_assert_fails(parse_file(BPF_OBJ("bad_helper"), "bh.o",
				   EGPU_HELPERS_GPU, &s),
			EGPU_EVERIFY, "object 'bh.o': prog 'p': insn 0 (call 9999): unknown helper 9999");
}
END_TEST

START_TEST(legacy_maps)
{
	struct object_spec s;

	ck_assert_fails(parse_file(BPF_OBJ("legacy_maps"), "lm.o",
				   EGPU_HELPERS_GPU, &s),
			EGPU_EFORMAT, "legacy map definitions in 'maps' section");
}
END_TEST

START_TEST(function_address)
{
	struct object_spec s;

	ck_assert_fails(parse_file(BPF_OBJ("func_addr"), "fa.o",
				   EGPU_HELPERS_GPU, &s),
			EGPU_ENOTSUP, "function addresses (callbacks) are not supported");
}
END_TEST

START_TEST(section_without_kernel)
{
	struct object_spec s;

	ck_assert_fails(parse_file(BPF_OBJ("bad_section"), "bs.o",
				   EGPU_HELPERS_GPU, &s),
			EGPU_EFORMAT, "prog 'nameless': section 'gpu/entry/' names no kernel");
}
END_TEST

START_TEST(kconfig_extern)
{
	struct object_spec s;

	ck_assert_fails(parse_file(BPF_OBJ("kconfig"), "kc.o",
				   EGPU_HELPERS_GPU, &s),
			EGPU_ENOTSUP, "extern .kconfig variables are not supported");
}
END_TEST

START_TEST(empty_file)
{
	struct object_spec s;
	char byte = 0;

	ck_assert_fails(object_parse_elf(&byte, 0, "empty.o", &s),
			EGPU_EFORMAT, "object 'empty.o': the file is empty");
}
END_TEST

START_TEST(garbage_bytes)
{
	struct object_spec s;
	uint8_t junk[512];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	ck_assert_fails(object_parse_elf(junk, sizeof(junk), "junk", &s),
			EGPU_EFORMAT, "object 'junk': not an ELF file");
	/* ELF magic followed by junk: the header is checked before libbpf */
	memcpy(junk, "\177ELF", 4);
	ck_assert_fails(object_parse_elf(junk, sizeof(junk), "junk", &s),
			EGPU_EFORMAT, "object 'junk': not a 64-bit little-endian ELF file");
	junk[EI_CLASS] = ELFCLASS64;
	junk[EI_DATA] = ELFDATA2LSB;
	ck_assert_fails(object_parse_elf(junk, sizeof(junk), "junk", &s),
			EGPU_EFORMAT, "object 'junk': ");
}
END_TEST

START_TEST(truncated_elf)
{
	struct object_spec s;
	size_t len;
	uint8_t *elf = (uint8_t *)tu_read_file(BPF_OBJ("progs"), &len);

	ck_assert_fails(object_parse_elf(elf, len / 2, "half", &s),
			EGPU_EFORMAT, "object 'half': the file is truncated: its");
	/* every length short of the whole file fails, saying why */
	for (size_t n = SELFMAG; n < len; n += 61)
		ck_assert_fails(object_parse_elf(elf, n, "cut", &s),
				EGPU_EFORMAT, "the file is truncated");
	free(elf);
}
END_TEST

/* Flipped bytes must give a clean result, never a crash or a leak. */
START_TEST(corrupted_elf)
{
	struct object_spec s;
	size_t len;
	uint8_t *elf = (uint8_t *)tu_read_file(BPF_OBJ("subprogs"), &len);
	uint8_t *copy = malloc(len);
	unsigned int seed = 1;

	ck_assert_ptr_nonnull(copy);
	for (int round = 0; round < 300; round++) {
		memcpy(copy, elf, len);
		for (int k = 0; k < 4; k++) {
			seed = seed * 1103515245 + 12345;
			copy[(seed >> 8) % len] ^= (uint8_t)(seed >> 24) | 1;
		}
		if (!object_parse_elf(copy, len, "flip", &s))
			object_spec_free(&s);
	}
	free(copy);
	free(elf);
}
END_TEST

/* Offset and size of the section @name in the ELF image. */
static void find_section(uint8_t *elf, size_t len, const char *name,
			 size_t *off, size_t *size)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	e = elf_memory((char *)elf, len);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		ck_assert_ptr_nonnull(gelf_getshdr(scn, &sh));
		if (!strcmp(elf_strptr(e, shstrndx, sh.sh_name), name)) {
			*off = sh.sh_offset;
			*size = sh.sh_size;
			elf_end(e);
			return;
		}
	}
	ck_abort_msg("no section %s", name);
}

/*
 * A .bss of 4 GiB (clang makes one from `__u64 big[1ULL << 29];`) cannot
 * be a map value: refused naming the section and its size, before libbpf,
 * which said "No such file or directory".
 */
START_TEST(global_data_too_big)
{
	struct object_spec s;
	size_t len, off, size;
	uint8_t *elf = (uint8_t *)tu_read_file(BPF_OBJ("progs"), &len);
	Elf64_Ehdr eh;
	Elf64_Shdr sh;

	find_section(elf, len, ".bss", &off, &size);
	memcpy(&eh, elf, sizeof(eh));
	for (unsigned i = 1; i < eh.e_shnum; i++) {
		uint8_t *at = elf + eh.e_shoff + i * sizeof(sh);

		memcpy(&sh, at, sizeof(sh));
		if (sh.sh_type == SHT_NOBITS && sh.sh_offset == off &&
		    sh.sh_size == size) {
			sh.sh_size = 1ull << 32;
			memcpy(at, &sh, sizeof(sh));
		}
	}
	ck_assert_fails(object_parse_elf(elf, len, "big", &s), EGPU_E2BIG,
			"'.bss' is 4294967296 bytes: global data becomes one map value, at most 4294967295 bytes");
	free(elf);
}
END_TEST

/*
 * progs.bpf.o with the first type of @kind in its .BTF changed by @edit;
 * *id gets that type's id.
 */
static uint8_t *corrupt_btf(int kind, void (*edit)(struct btf_type *t, uint32_t id),
			    size_t *len, uint32_t *id)
{
	uint8_t *elf = (uint8_t *)tu_read_file(BPF_OBJ("progs"), len);
	const struct btf_header *hdr;
	struct btf *btf;
	size_t off, size;

	find_section(elf, *len, ".BTF", &off, &size);
	hdr = (const void *)(elf + off);
	btf = btf__new(elf + off, size);
	ck_assert_ptr_nonnull(btf);
	for (*id = 1; *id < btf__type_cnt(btf); (*id)++) {
		const struct btf_type *t = btf__type_by_id(btf, *id);
		/* libbpf's copy keeps the types in file order */
		size_t at = (const char *)t - (const char *)btf__type_by_id(btf, 1);

		if (btf_kind(t) != kind)
			continue;
		edit((struct btf_type *)(elf + off + hdr->hdr_len + hdr->type_off + at), *id);
		btf__free(btf);
		return elf;
	}
	ck_abort_msg("no BTF type of kind %d", kind);
	return NULL;
}

static void point_nowhere(struct btf_type *t, uint32_t id)
{
	(void)id;
	t->type = 0x7fffffff;
}

static void point_at_itself(struct btf_type *t, uint32_t id)
{
	t->type = id;
}

static void name_out_of_range(struct btf_type *t, uint32_t id)
{
	(void)id;
	t->name_off = 0xffffff;
}

START_TEST(corrupt_btf_types)
{
	struct object_spec s;
	char text[128];
	size_t len;
	uint32_t id;
	uint8_t *elf;

	elf = corrupt_btf(BTF_KIND_PTR, point_nowhere, &len, &id);
	snprintf(text, sizeof(text), "corrupt BTF: type %u: refers to missing type 2147483647", id);
	ck_assert_fails(object_parse_elf(elf, len, "btf", &s), EGPU_EFORMAT, text);
	free(elf);

	elf = corrupt_btf(BTF_KIND_TYPEDEF, point_at_itself, &len, &id);
	snprintf(text, sizeof(text), "typedef or modifier loop through type %u", id);
	ck_assert_fails(object_parse_elf(elf, len, "btf", &s), EGPU_EFORMAT, text);
	free(elf);

	elf = corrupt_btf(BTF_KIND_VAR, name_out_of_range, &len, &id);
	ck_assert_fails(object_parse_elf(elf, len, "btf", &s), EGPU_EFORMAT,
			"name outside the string section at 16777215");
	free(elf);
}
END_TEST

/* ---- section names ---- */

static void assert_section(const char *section, int attach, const char *kernel)
{
	char *k = NULL;

	ck_assert_int_eq(object_attach_from_section(section, &k), attach);
	ck_assert_str_eq(k, kernel);
	free(k);
}

static void assert_bad_section(const char *section, const char *text)
{
	char *k = (char *)section;

	ck_assert_fails(object_attach_from_section(section, &k), EGPU_EFORMAT,
			text);
	ck_assert_ptr_null(k);
}

/* bpftime's aliases: implemented by libegpu's types, declared type kept. */
START_TEST(bpftime_map_types)
{
	static const struct {
		const char *name;
		uint32_t type, declared;
		int host_memory;
	} want[] = {
		{ "ghash", EGPU_MAP_HASH, EGPU_MAP_GPU_HASH, 0 },
		{ "kshared", EGPU_MAP_GPU_ARRAY, EGPU_MAP_GPU_KERNEL_SHARED_ARRAY, 0 },
		{ "pthost", EGPU_MAP_PERTHREAD_ARRAY, EGPU_MAP_PERTHREAD_ARRAY_HOST, 1 },
		{ "ghost", EGPU_MAP_GPU_ARRAY, EGPU_MAP_GPU_ARRAY_HOST, 1 },
	};
	struct object_spec s;

	ck_assert_ok(parse_file(BPF_OBJ("bpftime_maps"), "bpftime_maps.bpf.o",
				EGPU_HELPERS_GPU, &s));
	ck_assert_uint_eq(s.map_cnt, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct map_spec *m = &s.maps[map_index(&s, want[i].name)];

		ck_assert_uint_eq(m->type, want[i].type);
		ck_assert_uint_eq(m->declared_type, want[i].declared);
		ck_assert_int_eq(m->host_memory, want[i].host_memory);
	}
	ck_assert_str_eq(map_type_name(EGPU_MAP_GPU_ARRAY_HOST),
			 "gpu_array_host");
	ck_assert_str_eq(map_type_name(9), "unknown");
	object_spec_free(&s);
}
END_TEST

START_TEST(section_names)
{
	assert_section("gpu/entry/vectorAdd", EGPU_ATTACH_ENTRY, "vectorAdd");
	assert_section("gpu/exit/_Z*", EGPU_ATTACH_EXIT, "_Z*");
	assert_section("gpu/mem/*", EGPU_ATTACH_MEM, "*");
	assert_section("gpu/entry/a/b", EGPU_ATTACH_ENTRY, "a/b");
	assert_section("kprobe/k1", EGPU_ATTACH_ENTRY, "k1");
	assert_section("kretprobe/k?", EGPU_ATTACH_EXIT, "k?");
	assert_section("kprobe/__memcapture", EGPU_ATTACH_MEM, "*");
	assert_section("kretprobe/__memcapture", EGPU_ATTACH_EXIT, "__memcapture");
	assert_section("kprobe/__directly_run", EGPU_ATTACH_NONE, "");
	assert_section("kprobe/cuda__Z1kv", EGPU_ATTACH_ENTRY, "_Z1kv");
	assert_section("kretprobe/cuda_k", EGPU_ATTACH_EXIT, "cuda_k");
	assert_section("socket", EGPU_ATTACH_NONE, "");
	assert_section(".text", EGPU_ATTACH_NONE, "");
	assert_section("kprobe", EGPU_ATTACH_NONE, "");
	assert_section("", EGPU_ATTACH_NONE, "");
	assert_bad_section("gpu/exit/", "section 'gpu/exit/' names no kernel (use 'gpu/exit/*'");
	assert_bad_section("kprobe/", "section 'kprobe/' names no kernel");
	assert_bad_section("gpu/entry", "unknown attach point");
	assert_bad_section("gpu/start/k", "section 'gpu/start/k': unknown attach point");
}
END_TEST

static void assert_filter(const char *section, uint32_t spaces, uint32_t kinds)
{
	uint32_t s = 7, k = 7;

	ck_assert_int_eq(object_mem_filter_from_section(section, &s, &k), 0);
	ck_assert_uint_eq(s, spaces);
	ck_assert_uint_eq(k, kinds);
}

/* gpu/mem/K/SPACES/KINDS: what a memory probe runs before. */
START_TEST(section_mem_filters)
{
	uint32_t s, k;

	assert_section("gpu/mem/vadd/global/load,store", EGPU_ATTACH_MEM, "vadd");
	assert_filter("gpu/mem/vadd", 0, 0);
	assert_filter("gpu/mem/vadd/global", 1u << EGPU_SPACE_GLOBAL, 0);
	assert_filter("gpu/mem/*/global,shared/load,store",
		      1u << EGPU_SPACE_GLOBAL | 1u << EGPU_SPACE_SHARED,
		      1u << EGPU_MEM_LOAD | 1u << EGPU_MEM_STORE);
	assert_filter("gpu/mem/k/*/atomic", 0, 1u << EGPU_MEM_ATOMIC);
	assert_filter("gpu/entry/a/b", 0, 0);
	ck_assert_fails(object_mem_filter_from_section("gpu/mem/k/global/read", &s, &k),
			EGPU_EFORMAT, "section 'gpu/mem/k/global/read': 'read' is no access kind");
	ck_assert_fails(object_mem_filter_from_section("gpu/mem/k/globl", &s, &k),
			EGPU_EFORMAT, "'globl' is no state space (generic, global");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("object_elf");
	TCase *ok = tcase_create("load"), *bad = tcase_create("errors");

	tcase_add_test(ok, programs_and_sections);
	tcase_add_test(ok, declared_maps);
	tcase_add_test(ok, global_data);
	tcase_add_test(ok, map_relocations);
	tcase_add_test(ok, subprogram_linking);
	tcase_add_test(ok, header_helpers);
	tcase_add_test(ok, section_names);
	tcase_add_test(ok, bpftime_map_types);
	tcase_add_test(ok, section_mem_filters);
	tcase_add_test(bad, unsupported_map_type);
	tcase_add_test(bad, no_programs);
	tcase_add_test(bad, unknown_helper);
	tcase_add_test(bad, legacy_maps);
	tcase_add_test(bad, function_address);
	tcase_add_test(bad, section_without_kernel);
	tcase_add_test(bad, kconfig_extern);
	tcase_add_test(bad, empty_file);
	tcase_add_test(bad, garbage_bytes);
	tcase_add_test(bad, truncated_elf);
	tcase_add_test(bad, corrupted_elf);
	tcase_add_test(bad, global_data_too_big);
	tcase_add_test(bad, corrupt_btf_types);
	tcase_set_timeout(bad, 60);
	suite_add_tcase(s, ok);
	suite_add_tcase(s, bad);
	return tu_run_suite(s, true);
}
