/* SPDX-License-Identifier: MIT */
/* Internal pieces of ptx_instrument(): names, edits, probe code, linking. */
#ifndef EGPU_PTX_INSTR_H
#define EGPU_PTX_INSTR_H

#include <stdbool.h>

#include "ptx/module.h"
#include "ptx/ptx.h"

/* The names a kernel answers to (names.c). */
struct kernel_names {
	char *mangled;
	char *demangled; /* full signature, or a copy of mangled */
	char *qualified; /* "ns::scale<float>": no return type, no parameters */
	char *plain;     /* "ns::scale": also no template arguments */
	char *base;      /* "scale": also no enclosing scopes */
};

int kernel_names_init(struct kernel_names *kn, const char *name, size_t len);
void kernel_names_free(struct kernel_names *kn);
/* Exact match on any form, or fnmatch() when @pattern has * ? or [. */
bool kernel_names_match(const struct kernel_names *kn, const char *pattern);

/*
 * Splices on a text: each edit replaces @del bytes at @off with the text
 * appended to edits.text between its edit_at() and the next one's.
 */
struct edit {
	uint32_t off;
	uint32_t del;
	size_t ins;  /* start of its text in edits.text */
	size_t seq;  /* creation order: ties at one offset keep it */
};

struct edits {
	struct edit *v;
	size_t n;
	size_t cap;
	struct strbuf text;
};

void edits_init(struct edits *e);
void edits_free(struct edits *e);
/* Start an edit; append its text to the returned buffer. NULL: no memory. */
struct strbuf *edit_at(struct edits *e, uint32_t off, uint32_t del);
/* Append @text (@len bytes) with the edits applied to @out. */
int edits_apply(struct edits *e, const char *text, size_t len,
		struct strbuf *out);

/* One place in a kernel where probes are called (probe.c). */
struct probe_site {
	const struct ptx_module *m;
	const struct ptx_func *kernel;
	uint32_t kernel_id;
	int point;                    /* EGPU_ATTACH_ENTRY or _EXIT */
	uint32_t site;                /* exit number, 0 for the entry */
	const struct ptx_stmt *guard; /* guarded ret/exit, or NULL */
	const char *prefix;           /* unique prefix of inserted names */
	const char *const *funcs;     /* probe functions, in attach order */
	size_t nfuncs;
	bool need_ctx;                /* some probe reads the ctx */
};

/* The code calling every probe of @s, in its own scope. */
void emit_probe_site(struct strbuf *sb, const struct probe_site *s);

/* Probes to call in one kernel (rewrite.c). */
struct kernel_plan {
	uint32_t item;              /* the kernel's item in the module */
	uint32_t id;
	const char **entry;         /* entry probe functions, attach order */
	size_t nentry;
	const char **exit;          /* exit probe functions */
	size_t nexit;
	bool entry_ctx;             /* an entry probe reads the ctx */
	bool exit_ctx;              /* an exit probe reads the ctx */
	uint32_t entry_points;      /* out */
	uint32_t exit_points;       /* out */
};

/* Add the edits calling @plan's probes in its kernel. */
int rewrite_kernel(const struct ptx_module *m, struct kernel_plan *plan,
		   const char *prefix, struct edits *e);

/* Result of linking modules into the application (link.c). */
struct link_result {
	unsigned version_major; /* highest .version of all inputs */
	unsigned version_minor;
	size_t funcs;           /* function definitions linked in */
};

/*
 * Check @mods against @app and append to @block the declarations and
 * definitions they contribute, in an order that declares before use.
 */
/* Whether one of @mods defines the symbol @m's item @it declares. */
bool link_defined_by(struct ptx_module *const *mods, size_t nmod,
		     const struct ptx_module *m, const struct ptx_item *it);
int link_modules(const struct ptx_module *app, struct ptx_module *const *mods,
		 size_t nmod, struct strbuf *block, struct link_result *res);
/* The .func definition named @name in @mods, or NULL. */
const struct ptx_item *link_find_func(struct ptx_module *const *mods,
				      size_t nmod, const char *name,
				      const struct ptx_module **owner);

#endif
