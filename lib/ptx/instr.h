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

/* One probe at a site: called, or its body copied in when @body is set. */
struct probe_call {
	const char *func;
	const struct inline_func *body;
	bool fold; /* the copy's ctx loads become the site's values */
};

/* One place in a kernel where probes are called (probe.c). */
struct probe_site {
	const struct ptx_module *m;
	const struct ptx_func *kernel;
	uint32_t kernel_id;
	int point;                    /* EGPU_ATTACH_ENTRY or _EXIT */
	uint32_t site;                /* exit number, 0 for the entry */
	const struct ptx_stmt *guard; /* guarded ret/exit, or NULL */
	const char *prefix;           /* unique prefix of inserted names */
	const char *depot;            /* the kernel's .local for copied bodies */
	const struct probe_call *calls; /* in attach order */
	size_t ncalls;
	bool need_ctx;                /* some probe reads the ctx */
};

/*
 * EGPU_ENOTSUP when an entry probe that may end threads cannot be put into
 * the kernel of item @kernel_item: it, or a .func it may call, has a
 * barrier that counts arrivals (exitsafe.c).
 */
int check_early_exit(const struct ptx_module *m, uint32_t kernel_item,
		     const char *probe);

/* The code calling every probe of @s, in its own scope. */
void emit_probe_site(struct strbuf *sb, const struct probe_site *s);

/* The base of a memory instruction's address. */
enum mem_base { BASE_REG64, BASE_REG32, BASE_SYM, BASE_IMM };

/* What a memory instruction accesses (memop.c). */
struct mem_op {
	uint8_t kind;     /* EGPU_MEM_* */
	uint8_t space;    /* EGPU_SPACE_* of the address (cp.async: source) */
	bool cluster;     /* .shared::cluster */
	uint8_t base_is;  /* enum mem_base */
	uint32_t base;    /* its token */
	int64_t off;      /* the immediate added */
	uint32_t size;    /* bytes; 0: register @size_reg at run time */
	int32_t size_reg; /* token, or -1 */
	/* Stores up to .v4: the source operand, tokens [value, value_end)
	 * (a register, an immediate or a { } vector), and the type modifier
	 * token; value 0 when the access gives none (egpu_mem_ctx.value). */
	uint32_t value, value_end, type;
	uint8_t vec;
};

enum { MEM_NONE, MEM_PROBE, MEM_SKIP };

/*
 * Classify instruction @st of @f: MEM_NONE (no memory access), MEM_PROBE
 * (@op filled) or MEM_SKIP (an access without a probe; *why says why).
 */
int mem_op_read(const struct ptx_module *m, const struct ptx_func *f,
		const struct ptx_stmt *st, struct mem_op *op, const char **why);
/* Bits of the register or integer constant store @op of @f writes, 0 if
 * neither. */
int mem_value_bits(const struct ptx_module *m, const struct ptx_func *f,
		   const struct mem_op *op);
/*
 * Whether the bytes store @op of @f writes fit the ctx tail's value_bits:
 * at most 8 of them, from one register or an integer constant.
 */
bool mem_value_in_reg(const struct ptx_module *m, const struct ptx_func *f,
		      const struct mem_op *op);
/* Register @reg (.b64) = the generic address of the first byte @op
 * accesses (the state space's, for a .shared::cluster access). */
void mem_op_address(struct strbuf *sb, const struct ptx_module *m,
		    const struct mem_op *op, const char *reg);
/* Bits of register @t as declared in @f (1 for .pred), -1 if undeclared. */
int reg_bits(const struct ptx_module *m, const struct ptx_func *f, uint32_t t);
/* Whether @t is the name @decl declares (a family "%r<N>" if @family). */
bool reg_name_matches(const struct ptx_module *m, uint32_t decl, bool family,
		      uint32_t t);

/* Probes to call in one kernel (rewrite.c). */
struct kernel_plan {
	uint32_t item;              /* the kernel's item in the module */
	uint32_t id;
	struct probe_call *entry;   /* entry probes, attach order */
	size_t nentry;
	struct probe_call *exit;    /* exit probes */
	size_t nexit;
	bool entry_ctx;             /* an entry probe reads the ctx */
	bool exit_ctx;              /* an exit probe reads the ctx */
	uint32_t entry_points;      /* out */
	uint32_t exit_points;       /* out */
};

/* Add the edits calling @plan's probes in its kernel; @depot: its stack
 * for copied bodies (declare_locals), or NULL. */
int rewrite_kernel(const struct ptx_module *m, struct kernel_plan *plan,
		   const char *prefix, const char *depot, struct edits *e);

/* Exit points (rewrite.c): a ret or exit instruction; whether the last
 * instruction of @f lets control reach its closing brace. */
bool stmt_is_exit(const struct ptx_module *m, const struct ptx_stmt *st);
bool func_falls_off_end(const struct ptx_module *m, const struct ptx_func *f);
/* Whether the opcode of instruction @st has modifier @mod (".sync"). */
bool stmt_has_modifier(const struct ptx_module *m, const struct ptx_stmt *st,
		       const char *mod);

/* Most thread-local registers one function's copies may share. */
#define FUNC_TL_MAX 256

/* .local variables and shared registers of one function's inserted code. */
struct func_locals {
	const char *depot;  /* stack of copied bodies, or NULL */
	uint32_t size;
	uint32_t align;
	const char *mctx;   /* memory probes' ctx, or NULL */
	uint32_t mctx_size;
	/* thread-local words (core/tlocal.h) the copies use, each once */
	uint64_t tl[FUNC_TL_MAX];
	uint32_t ntl;
};

/*
 * Grow @l's stack to the largest of the bodies in @calls and add the
 * thread-local registers they use (EGPU_E2BIG past FUNC_TL_MAX).
 */
int calls_local(const struct probe_call *calls, size_t n,
		struct func_locals *l);

/* The first statement of @f's body after its declarations (and .loc):
 * where code run once at its entry goes. */
const struct ptx_stmt *func_entry_stmt(const struct ptx_module *m,
				       const struct ptx_func *f);

/* Declare @l at the top of @f's body (before any probe). */
int declare_locals(const struct ptx_module *m, const struct ptx_func *f,
		   const struct func_locals *l, struct edits *e);

/* Little-endian @bytes of @v at @p. */
void put_le(uint8_t *p, uint64_t v, unsigned bytes);

/* A module-local symbol renamed because another module uses its name. */
struct rename {
	const char *old; /* in the module's text */
	uint32_t len;
	char *name;      /* NUL-terminated */
};

struct renames {
	struct rename *v;
	size_t n;
};

/* The new name of @m's token @t, or NULL if it keeps its own (renames.c). */
const char *renames_find(const struct renames *r, const struct ptx_module *m,
			 uint32_t t);

/* Result of linking modules into the application (link.c). */
struct link_result {
	unsigned version_major;  /* highest .version of all inputs */
	unsigned version_minor;
	size_t funcs;            /* function definitions linked in */
	struct renames *renames; /* per linked module */
	size_t nmod;
};

void link_result_free(struct link_result *res);

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

/*
 * A probe function prepared for copying into its sites (inline.c): its
 * registers, .local variables and labels get each site's own names, its
 * parameter loads become moves from the site's arguments, and ret a
 * branch to the end of the copy.
 */
struct inline_func;

/*
 * What a probe's ctx holds: its size and the fields a site knows only as
 * a register or a symbol's address (kernel ctx: params; mem ctx: addr,
 * text, size, value, and the tail's value_bits and value_at). Copies
 * fold a ctx load only if it reads every such field it touches whole, or
 * the low bytes of a field marked @low (a register LLVM narrows loads of).
 */
struct ctx_layout {
	uint32_t size;
	uint32_t ndyn;
	struct { uint32_t off, size; bool low; } dyn[6];
};

extern const struct ctx_layout ctx_layout_kernel; /* struct egpu_kernel_ctx */
extern const struct ctx_layout ctx_layout_mem;    /* struct egpu_mem_ctx */
extern const struct ctx_layout ctx_layout_mc;     /* struct mc_site_ctx */

/*
 * Prepare @m's function @it (a probe: two parameters, one return value)
 * for a ctx laid out as @layout; @rn are the linker's renames of @m's
 * symbols. *out is NULL and *why (if @why is not NULL) says why when the
 * body cannot be copied: sites then call it.
 */
int inline_prepare(const struct ptx_module *m, const struct ptx_item *it,
		   const struct renames *rn, const struct ctx_layout *layout,
		   struct inline_func **out, const char **why);
void inline_free(struct inline_func *fn);
/* Bytes and alignment of @fn's .local variable; 0 bytes if it has none. */
void inline_local(const struct inline_func *fn, uint32_t *size,
		  uint32_t *align);
/* The thread-local words (core/tlocal.h) @fn's body names: *n of them. */
const uint64_t *inline_thread_local(const struct inline_func *fn, size_t *n);
/* Whether function @it of @m names thread-local registers. */
bool func_uses_thread_local(const struct ptx_module *m,
			    const struct ptx_item *it);
/*
 * Whether @fn reads its ctx only by loads at constant offsets, which
 * copies can replace by the values: such a probe needs no ctx built.
 */
bool inline_folds_ctx(const struct inline_func *fn);
/* Whether @fn sets its result only by whole 64-bit stores, which a copy
 * may move into a register of the site (inline_site.ret). */
bool inline_gives_result(const struct inline_func *fn);
/* Whether a folded @fn loads ctx bytes [@off, @off + @size). */
bool inline_reads_ctx(const struct inline_func *fn, uint32_t off,
		      uint32_t size);

/*
 * A field of the layout's dyn[] at one site: cvta.@cvta of symbol @name,
 * or register @name of @bits bits (@cvta NULL); @name NULL: the image's
 * bytes. @len: bytes of @name, or -1 if it ends with a NUL.
 */
struct ctx_dyn {
	const char *name;
	int len;
	const char *cvta;
	unsigned bits;
};

/* The names one copy of a body uses, and what it knows of the site. */
struct inline_site {
	const char *name;  /* prefix of its names, unique in the module */
	const char *depot; /* the function's .local variable for copies */
	const char *ctx;   /* registers holding its two arguments */
	const char *len;
	/* Fold ctx loads: @image holds the site's ctx (layout->size bytes),
	 * @dyn says how to get the layout's run-time fields; NULL: load
	 * from @ctx. */
	const struct ctx_layout *layout;
	const uint8_t *image;
	const struct ctx_dyn *dyn;
	const char *ret;   /* a .b64 register for the result, or NULL */
};

/* The body of @fn as copy @at, ending with the label $NAME. */
void emit_inlined(struct strbuf *sb, const struct inline_func *fn,
		  const struct inline_site *at);

#endif
