/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <stdbool.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "egpu.h"
#include "elf_maps.h"
#include "elf_progs.h"

struct elf_file {
	Elf *elf;
	size_t shstrndx;
	Elf_Data *symbols;
	size_t symstr;
	struct elf_progs *out;
};

static const char *sec_name(struct elf_file *f, size_t idx)
{
	Elf_Scn *scn = elf_getscn(f->elf, idx);
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh))
		return "";
	return elf_strptr(f->elf, f->shstrndx, sh.sh_name);
}

static int load_maps(const char *path, struct elf_file *f)
{
	struct elf_map *m;
	size_t n;

	if (elf_maps_read(path, &m, &n))
		return -1;
	f->out->maps = calloc(n ? n : 1, sizeof(*f->out->maps));
	for (size_t i = 0; f->out->maps && i < n; i++) {
		f->out->maps[i] = (struct bpf_map_spec){
			.name = m[i].name, .type = m[i].type,
			.key_size = m[i].key_size,
			.value_size = m[i].value_size,
			.max_entries = m[i].max_entries, .init = m[i].init,
			.init_len = m[i].init_len, .readonly = m[i].readonly,
		};
	}
	f->out->map_cnt = f->out->maps ? n : 0;
	free(m);
	return f->out->maps ? 0 : -1;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The map a symbol of section @sec names: a .maps entry or a data section. */
static int map_of(struct elf_file *f, const char *sym, const char *sec,
		  int *is_data)
{
	*is_data = strcmp(sec, ".maps") != 0;
	for (size_t i = 0; i < f->out->map_cnt; i++) {
		const char *name = f->out->maps[i].name;

		/* libbpf names data maps "<object prefix><section>" */
		if (*is_data ? ends_with(name, sec) : !strcmp(name, sym))
			return (int)i;
	}
	fprintf(stderr, "no map for symbol %s in %s\n", sym, sec);
	return -1;
}

static Elf_Data *section_data(struct elf_file *f, size_t idx)
{
	Elf_Scn *scn = elf_getscn(f->elf, idx);

	return scn ? elf_getdata(scn, NULL) : NULL;
}

/* Apply the relocations of section @sec to @insns (its bytes from @base). */
static int relocate(struct elf_file *f, size_t sec, size_t base,
		    struct bpf_insn *insns, size_t cnt, size_t text_at,
		    int *needs_text)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_REL ||
		    sh.sh_info != sec)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t r = 0; r < sh.sh_size / sh.sh_entsize; r++) {
			GElf_Rel rel;
			GElf_Sym sym;
			size_t i;
			struct bpf_insn *insn;
			const char *sname, *ssec;
			int is_data, map;

			gelf_getrel(d, (int)r, &rel);
			if (rel.r_offset < base ||
			    rel.r_offset >= base + cnt * 8)
				continue;
			i = (rel.r_offset - base) / 8;
			insn = &insns[i];
			gelf_getsym(f->symbols, (int)GELF_R_SYM(rel.r_info), &sym);
			sname = elf_strptr(f->elf, f->symstr, sym.st_name);
			ssec = sec_name(f, sym.st_shndx);
			if (insn->code == (BPF_JMP | BPF_CALL)) {
				int64_t target = (int64_t)sym.st_value / 8 +
						 insn->imm + 1;

				*needs_text = 1;
				insn->imm = (int32_t)((int64_t)text_at + target -
						      (int64_t)i - 1);
				continue;
			}
			map = map_of(f, sname, ssec, &is_data);
			if (map < 0 || i + 1 >= cnt)
				return -1;
			if (is_data) {
				insns[i + 1].imm = (int32_t)sym.st_value + insn->imm;
				insn->src_reg = BPF_PSEUDO_MAP_IDX_VALUE;
			} else {
				insn->src_reg = BPF_PSEUDO_MAP_IDX;
			}
			insn->imm = map;
		}
	}
	return 0;
}

static size_t text_index(struct elf_file *f)
{
	size_t n;

	elf_getshdrnum(f->elf, &n);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(sec_name(f, i), ".text"))
			return i;
	return 0;
}

/* One program: its function's bytes, then .text if it calls into it. */
static int load_prog(struct elf_file *f, const GElf_Sym *sym,
		     struct bpf_prog_spec *p)
{
	Elf_Data *d = section_data(f, sym->st_shndx);
	size_t cnt = sym->st_size / 8, text = text_index(f), tcnt = 0;
	Elf_Data *td = text ? section_data(f, text) : NULL;
	int needs_text = 0, dummy = 0;

	if (td)
		tcnt = td->d_size / 8;
	p->insns = calloc(cnt + tcnt, sizeof(*p->insns));
	if (!p->insns)
		return -1;
	memcpy(p->insns, (char *)d->d_buf + sym->st_value, cnt * 8);
	if (relocate(f, sym->st_shndx, sym->st_value, p->insns, cnt, cnt,
		     &needs_text))
		return -1;
	p->insn_cnt = cnt;
	if (!needs_text)
		return 0;
	memcpy(p->insns + cnt, td->d_buf, tcnt * 8);
	p->insn_cnt = cnt + tcnt;
	return relocate(f, text, 0, p->insns + cnt, tcnt, 0, &dummy);
}

int section_attach(const char *section)
{
	static const struct { const char *prefix; int at; } map[] = {
		{ "gpu/entry/", EGPU_ATTACH_ENTRY },
		{ "gpu/exit/", EGPU_ATTACH_EXIT },
		{ "gpu/mem/", EGPU_ATTACH_MEM },
		{ "kprobe/__memcapture", EGPU_ATTACH_MEM },
		{ "kprobe/", EGPU_ATTACH_ENTRY },
		{ "kretprobe/", EGPU_ATTACH_EXIT },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strncmp(section, map[i].prefix, strlen(map[i].prefix)))
			return map[i].at;
	return EGPU_ATTACH_NONE;
}

static int load_progs(struct elf_file *f)
{
	size_t nsyms = f->symbols->d_size / sizeof(Elf64_Sym);

	f->out->progs = calloc(nsyms, sizeof(*f->out->progs));
	if (!f->out->progs)
		return -1;
	for (size_t s = 0; s < nsyms; s++) {
		GElf_Sym sym;
		const char *sec;
		struct bpf_prog_spec *p;

		gelf_getsym(f->symbols, (int)s, &sym);
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size)
			continue;
		sec = sec_name(f, sym.st_shndx);
		if (!strcmp(sec, ".text"))
			continue;
		p = &f->out->progs[f->out->prog_cnt++];
		p->name = strdup(elf_strptr(f->elf, f->symstr, sym.st_name));
		p->section = strdup(sec);
		p->attach = section_attach(sec);
		p->kernel = strdup("");
		if (load_prog(f, &sym, p))
			return -1;
	}
	return 0;
}

static int find_symbols(struct elf_file *f)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
			f->symbols = elf_getdata(scn, NULL);
			f->symstr = sh.sh_link;
			return 0;
		}
	}
	return -1;
}

int elf_progs_load(const char *path, struct elf_progs *out)
{
	struct elf_file f = { .out = out };
	int fd, err = -1;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	if (load_maps(path, &f))
		return -1;
	fd = open(path, O_RDONLY);
	f.elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (f.elf && !elf_getshdrstrndx(f.elf, &f.shstrndx) &&
	    !find_symbols(&f))
		err = load_progs(&f);
	if (f.elf)
		elf_end(f.elf);
	if (fd >= 0)
		close(fd);
	if (err)
		fprintf(stderr, "cannot load the programs of %s\n", path);
	return err;
}

void elf_progs_free(struct elf_progs *ep)
{
	for (size_t i = 0; i < ep->prog_cnt; i++) {
		free(ep->progs[i].name);
		free(ep->progs[i].section);
		free(ep->progs[i].kernel);
		free(ep->progs[i].insns);
	}
	for (size_t i = 0; i < ep->map_cnt; i++) {
		free(ep->maps[i].name);
		free(ep->maps[i].init);
	}
	free(ep->progs);
	free(ep->maps);
	memset(ep, 0, sizeof(*ep));
}
