/* SPDX-License-Identifier: MIT */
/*
 * Source lines of programs, from the line info clang -g writes to
 * .BTF.ext: records (instruction byte offset in its section, file, line
 * text, line) per section, the strings in .BTF's string table. A program's
 * own body starts at its symbol's offset in its section; the records in
 * [offset, offset + size) are its lines. Everything is bounds-checked, and
 * line info that does not parse is ignored: it only annotates messages.
 */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "object/libbpf_read.h"
#include "object/object.h"

#define BTF_MAGIC 0xeB9F

/* The parts of .BTF and .BTF.ext that line info needs. */
struct btf_lines {
	const char *strs;      /* .BTF string table */
	uint32_t strs_len;
	const uint8_t *recs;   /* .BTF.ext line info: rec_size, then blocks */
	uint32_t recs_len;
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* A string of the table at @off, or NULL if @off is outside it. */
static const char *btf_str(const struct btf_lines *b, uint32_t off)
{
	return off < b->strs_len && memchr(b->strs + off, '\0', b->strs_len - off) ?
	       b->strs + off : NULL;
}

/* Header: magic, version, flags, hdr_len, then (off, len) pairs after it. */
static bool btf_part(const Elf_Data *d, unsigned pair, const uint8_t **p,
		     uint32_t *len)
{
	const uint8_t *b = d ? d->d_buf : NULL;
	uint32_t hdr, off;

	if (!b || d->d_size < 8 + 8 * (pair + 1) || b[0] != (BTF_MAGIC & 0xff) ||
	    b[1] != BTF_MAGIC >> 8)
		return false;
	hdr = rd32(b + 4);
	off = rd32(b + 8 + 8 * pair);
	*len = rd32(b + 12 + 8 * pair);
	if (hdr > d->d_size || off > d->d_size - hdr || *len > d->d_size - hdr - off)
		return false;
	*p = b + hdr + off;
	return true;
}

static bool btf_lines_find(Elf *elf, struct btf_lines *b)
{
	const uint8_t *strs;

	/* .BTF: (type_off, type_len), (str_off, str_len);
	 * .BTF.ext: (func_info), (line_info). */
	if (!btf_part(object_elf_section(elf, ".BTF"), 1, &strs, &b->strs_len) ||
	    !btf_part(object_elf_section(elf, ".BTF.ext"), 1, &b->recs, &b->recs_len))
		return false;
	b->strs = (const char *)strs;
	return b->recs_len >= 4 && rd32(b->recs) >= 16;
}

/* The offset and size of function @name in section @section. */
static bool func_symbol(Elf *elf, const char *name, const char *section,
			GElf_Sym *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *sym, *sec;
			GElf_Shdr ssh;
			Elf_Scn *s;

			if (!gelf_getsym(d, (int)i, out) ||
			    GELF_ST_TYPE(out->st_info) != STT_FUNC ||
			    !(sym = elf_strptr(elf, sh.sh_link, out->st_name)) ||
			    strcmp(sym, name) || !(s = elf_getscn(elf, out->st_shndx)) ||
			    !gelf_getshdr(s, &ssh) ||
			    !(sec = elf_strptr(elf, shstrndx, ssh.sh_name)))
				continue;
			if (!strcmp(sec, section))
				return true;
		}
	}
	return false;
}

/* Add the records of block @blk (@n of @rec bytes) inside @sym to @p. */
static int add_block(struct prog_spec *p, const struct btf_lines *b,
		     const uint8_t *blk, uint32_t n, uint32_t rec,
		     const GElf_Sym *sym)
{
	struct bpf_line_info *l = realloc(p->lines, (p->line_cnt + n + 1) * sizeof(*l));

	if (!l)
		return err_set(EGPU_ENOMEM, "prog '%s': out of memory", p->name);
	p->lines = l;
	for (uint32_t i = 0; i < n; i++, blk += rec) {
		uint32_t off = rd32(blk), file = rd32(blk + 4), text = rd32(blk + 8);

		if (off < sym->st_value || off - sym->st_value >= sym->st_size ||
		    off % 8 || !btf_str(b, file) || !btf_str(b, text))
			continue;
		l[p->line_cnt++] = (struct bpf_line_info){
			.insn = (uint32_t)((off - sym->st_value) / 8),
			.line = rd32(blk + 12) >> 10, .file = file, .text = text,
		};
	}
	return 0;
}

static int by_insn(const void *a, const void *b)
{
	const struct bpf_line_info *x = a, *y = b;

	return x->insn < y->insn ? -1 : x->insn > y->insn;
}

static int prog_lines(Elf *elf, const struct btf_lines *b,
		      struct prog_spec *p)
{
	uint32_t rec = rd32(b->recs), pos = 4;
	GElf_Sym sym;
	int err = 0;

	if (!func_symbol(elf, p->name, p->section, &sym) ||
	    sym.st_size / 8 > p->insn_cnt)
		return 0;
	while (!err && b->recs_len - pos >= 8) {
		const char *sec = btf_str(b, rd32(b->recs + pos));
		uint32_t n = rd32(b->recs + pos + 4);

		pos += 8;
		if ((uint64_t)n * rec > b->recs_len - pos)
			break;
		if (sec && !strcmp(sec, p->section))
			err = add_block(p, b, b->recs + pos, n, rec, &sym);
		pos += n * rec;
	}
	if (err || !p->line_cnt)
		return err;
	qsort(p->lines, p->line_cnt, sizeof(*p->lines), by_insn);
	p->line_insns = sym.st_size / 8;
	p->line_strs = malloc(b->strs_len);
	if (!p->line_strs)
		return err_set(EGPU_ENOMEM, "prog '%s': out of memory", p->name);
	memcpy(p->line_strs, b->strs, b->strs_len);
	return 0;
}

int object_read_lines(const void *image, size_t len, struct object_spec *spec)
{
	struct btf_lines b;
	char *copy = malloc(len ? len : 1);
	Elf *elf;
	int err = 0;

	if (!copy)
		return err_set(EGPU_ENOMEM, "out of memory copying %zu bytes", len);
	memcpy(copy, image, len);
	elf = elf_version(EV_CURRENT) != EV_NONE ? elf_memory(copy, len) : NULL;
	if (elf && btf_lines_find(elf, &b))
		for (size_t i = 0; !err && i < spec->prog_cnt; i++)
			err = prog_lines(elf, &b, &spec->progs[i]);
	elf_end(elf);
	free(copy);
	return err;
}
