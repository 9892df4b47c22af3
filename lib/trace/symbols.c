/* SPDX-License-Identifier: MIT */
/*
 * Return addresses to function names, at collect_stop() and never in a
 * callback. dladdr1() finds the module and its load bias; the module's
 * ELF symbol table (.symtab, else .dynsym) names the function, so
 * executables built without -rdynamic are named too. Where no symbol
 * covers an address the frame reads "lib.so+0xOFFSET", the offset in the
 * file's address space (what addr2line takes). Each address and module
 * is looked up once.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "symbols.h"

struct sym {
	uintptr_t lo, hi;     /* file addresses */
	const char *name;     /* in the ELF's string table */
};

struct module {
	uintptr_t bias;
	const char *file;     /* to open; "/proc/self/exe" for the program */
	const char *base;     /* interned basename for offsets */
	enum sym_role role;
	bool loaded;          /* symbols read (or tried) */
	int fd;
	Elf *elf;
	struct sym *syms;
	size_t sym_n;
};

struct frame_sym {
	struct module *mod;   /* NULL: in no module */
	const char *name;     /* NULL until asked for */
};

struct symbolizer {
	struct strpool *names;
	struct ptrmap mods;   /* link_map * -> struct module * */
	struct ptrmap addrs;  /* address -> struct frame_sym * */
	struct link_map *self;
};

struct symbolizer *sym_new(struct strpool *names)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	Dl_info info;

	if (!s) {
		err_set(EGPU_ENOMEM, "symbols: out of memory");
		return NULL;
	}
	s->names = names;
	if (!dladdr1((void *)sym_new, &info, (void **)&s->self,
		     RTLD_DL_LINKMAP))
		s->self = NULL;
	elf_version(EV_CURRENT);
	return s;
}

static enum sym_role role_of(struct symbolizer *s, struct link_map *lm,
			     const char *base)
{
	if (lm == s->self)
		return SYM_SELF;
	if (has_prefix(base, "libcuda.so") ||
	    has_prefix(base, "libcudart.so") ||
	    has_prefix(base, "libcupti.so"))
		return SYM_CUDA;
	if (has_prefix(base, "libc.so"))
		return SYM_LIBC;
	return SYM_OTHER;
}

static struct module *module_new(struct symbolizer *s, struct link_map *lm)
{
	struct module *m = calloc(1, sizeof(*m));
	const char *slash;

	if (!m)
		return NULL;
	m->fd = -1;
	m->bias = lm->l_addr;
	if (*lm->l_name) {
		m->file = lm->l_name;
		slash = strrchr(lm->l_name, '/');
		m->base = slash ? slash + 1 : lm->l_name;
	} else {
		m->file = "/proc/self/exe";
		m->base = program_invocation_short_name;
	}
	m->base = strpool_add(s->names, m->base, strlen(m->base));
	m->role = role_of(s, lm, m->base);
	if (!m->base || ptrmap_put(&s->mods, (uintptr_t)lm, m)) {
		free(m);
		return NULL;
	}
	return m;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The function symbols of one symbol table section into m->syms. */
static int read_symtab(struct module *m, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	GElf_Sym sym;

	m->syms = calloc(n ? n : 1, sizeof(*m->syms));
	if (!data || !m->syms)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned type;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		m->syms[m->sym_n++] = (struct sym){ sym.st_value,
			sym.st_value + sym.st_size,
			elf_strptr(m->elf, sh->sh_link, sym.st_name) };
	}
	qsort(m->syms, m->sym_n, sizeof(*m->syms), sym_cmp);
	return 0;
}

/* Read the module's symbols; a module without any just has none. */
static void module_load(struct module *m)
{
	Elf_Scn *scn = NULL, *dyn = NULL, *tab = NULL;
	GElf_Shdr sh;

	m->loaded = true;
	m->fd = open(m->file, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0)
		return;
	m->elf = elf_begin(m->fd, ELF_C_READ, NULL);
	while (m->elf && (scn = elf_nextscn(m->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			tab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dyn = scn;
	}
	if (!tab)
		tab = dyn;
	if (tab && gelf_getshdr(tab, &sh))
		read_symtab(m, tab, &sh);
}

static const char *module_lookup(const struct module *m, uintptr_t rel)
{
	size_t lo = 0, hi = m->sym_n;
	const struct sym *sy;

	/* the last symbol starting at or below rel */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].lo <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	sy = &m->syms[lo - 1];
	return rel < sy->hi || sy->hi == sy->lo ? sy->name : NULL;
}

static struct frame_sym *frame_of(struct symbolizer *s, uintptr_t addr)
{
	struct frame_sym *f = ptrmap_get(&s->addrs, addr);
	struct link_map *lm = NULL;
	Dl_info info;

	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (dladdr1((void *)addr, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm &&
	    !(f->mod = ptrmap_get(&s->mods, (uintptr_t)lm)))
		f->mod = module_new(s, lm);
	if ((lm && !f->mod) || ptrmap_put(&s->addrs, addr, f)) {
		free(f);
		return NULL;
	}
	return f;
}

/* The identifier of a demangled function: "cudaError cudaLaunchKernel
 * <char>(char const*, ...)" -> "cudaLaunchKernel" (start and length). */
static const char *identifier(const char *name, size_t *len)
{
	const char *end = name + strcspn(name, "<(");
	const char *start = end;

	while (start > name && start[-1] != ' ')
		start--;
	*len = (size_t)(end - start);
	return start;
}

bool sym_cuda_runtime(const char *name, const char *api)
{
	size_t len;
	const char *id = identifier(name, &len);

	if (has_prefix(id, "cudart::") || has_prefix(id, "__cudart") ||
	    has_prefix(id, "libcudart_static_"))
		return true;
	if (!api) /* cuFoo, cudaFoo */
		return has_prefix(id, "cu") &&
		       ((id[2] >= 'A' && id[2] <= 'Z') ||
			(has_prefix(id, "cuda") && id[4] >= 'A' && id[4] <= 'Z'));
	return len >= 4 && has_prefix(id, "cu") && !strncmp(id, api, len);
}

bool sym_startup(struct symbolizer *s, uintptr_t addr)
{
	const char *name;

	if (sym_role(s, addr) == SYM_LIBC)
		return true;
	name = sym_name(s, addr);
	return name && !strcmp(name, "_start");
}

enum sym_role sym_role(struct symbolizer *s, uintptr_t addr)
{
	struct frame_sym *f = frame_of(s, addr);

	return f && f->mod ? f->mod->role : SYM_OTHER;
}

const char *sym_name(struct symbolizer *s, uintptr_t addr)
{
	struct frame_sym *f = frame_of(s, addr);
	const char *raw = NULL;
	char buf[256];

	if (!f || f->name)
		return f ? f->name : NULL;
	if (!f->mod) {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
		return f->name = strpool_add(s->names, buf, strlen(buf));
	}
	if (!f->mod->loaded)
		module_load(f->mod);
	raw = module_lookup(f->mod, addr - f->mod->bias);
	if (raw && *raw)
		return f->name = strpool_demangled(s->names, raw);
	snprintf(buf, sizeof(buf), "%s+0x%llx", f->mod->base,
		 (unsigned long long)(addr - f->mod->bias));
	return f->name = strpool_add(s->names, buf, strlen(buf));
}

void sym_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->mods.cap; i++) {
		struct module *m = s->mods.val[i];

		if (!s->mods.key[i])
			continue;
		free(m->syms);
		if (m->elf)
			elf_end(m->elf);
		if (m->fd >= 0)
			close(m->fd);
		free(m);
	}
	for (size_t i = 0; i < s->addrs.cap; i++)
		if (s->addrs.key[i])
			free(s->addrs.val[i]);
	ptrmap_free(&s->mods);
	ptrmap_free(&s->addrs);
	free(s);
}
