/* SPDX-License-Identifier: MIT */
/* Memory-access probes: which instructions get which probes, and the code. */
#ifndef EGPU_PTX_MEMPLAN_H
#define EGPU_PTX_MEMPLAN_H

#include "ptx/instr.h"

/* One EGPU_ATTACH_MEM request, prepared. */
struct mem_req {
	const struct ptx_attach *r;
	struct probe_call call;
	bool need_ctx;   /* its sites build a ctx in memory */
	bool reads_text; /* a folded copy reads ctx.text */
	bool reads_value; /* a folded copy reads ctx.value (mem_plan_make) */
	bool reads_value_at; /* ... the tail's value_at, value_bits */
	bool reads_value_bits;
	uint8_t *kernels; /* by kernel id: r->kernel matches it */
	/* Past @limit bytes of copies (call.body's @copy_bytes each), sites
	 * call @called instead, building a ctx if @called_ctx. */
	size_t copy_bytes;
	size_t limit;
	struct probe_call called;
	bool called_ctx;
	/* egpu memcheck's request: the device runtime's functions its
	 * sites copy (memcheck_site.c) */
	const struct inline_func *mc_find;
	const struct inline_func *mc_window;
};

/* One memory instruction given probes. */
struct mem_site {
	uint32_t item;      /* its function */
	uint32_t stmt;      /* statement index in the function */
	struct mem_op op;
	uint32_t kernel_id; /* or EGPU_MEM_KERNEL_SHARED */
	uint32_t file;      /* .loc before it: file number, line; 0: none */
	uint32_t line;
	size_t calls;       /* first of its requests (mem_plan_call) */
	size_t ncalls;
	bool need_ctx;      /* a probe reads a ctx built in memory */
	bool need_text;     /* a probe reads ctx.text: the string exists */
	bool need_value;    /* a probe reads ctx.value: the store's copy */
	bool value_in_reg;  /* the stored bytes fit value_bits (core/mem_ctx.h) */
	bool need_bits;     /* a probe reads them there */
};

struct mem_plan;

/*
 * Find the sites of @reqs in @m, whose kernels (by index) are the items
 * @kernel_items with ids @kernel_ids (both read during the call only).
 * *out must be freed with mem_plan_free() even on error.
 */
int mem_plan_make(const struct ptx_module *m, const uint32_t *kernel_items,
		  const uint32_t *kernel_ids, size_t nkernels,
		  struct mem_req *reqs, size_t nreq, struct mem_plan **out);
/* Number the sites from @base (egpu_mem_ctx.site); 0 until set. */
void mem_plan_set_site_base(struct mem_plan *p, uint32_t base);
uint32_t mem_plan_site_base(const struct mem_plan *p);
void mem_plan_free(struct mem_plan *p);
/* The sites in text order (site number = index); @p may be NULL. */
size_t mem_plan_sites(const struct mem_plan *p, const struct mem_site **sites);
/* Request @i of site @s. */
const struct mem_req *mem_plan_call(const struct mem_plan *p,
				    const struct mem_site *s, size_t i);
/* The probe of request @i at site @s: copied, or called past the limit. */
const struct probe_call *mem_plan_probe(const struct mem_plan *p,
					const struct mem_site *s, size_t i);
/* Probes called at sites instead of copied, because of the limits. */
size_t mem_plan_called(const struct mem_plan *p);
/* Memory instructions of probed functions that got no probe. */
size_t mem_plan_skipped(const struct mem_plan *p);
/* Sites the kernel of index @kernel runs (its own and its .funcs'). */
uint32_t mem_plan_points(const struct mem_plan *p, size_t kernel);

/* Names the code of one function's sites uses (memsite.c). */
struct mem_names {
	const char *prefix;
	const char *depot; /* the function's stack for copies, or NULL */
	const char *mctx;  /* its .local ctx, or NULL if no site builds one */
};

/*
 * Insert the probes of every site of function @item before its
 * instruction; @names as declared for that function.
 */
int mem_emit_item(const struct mem_plan *p, const struct ptx_module *m,
		  uint32_t item, const struct mem_names *names,
		  struct edits *e);
/* Whether a site of function @item builds its ctx in memory. */
bool mem_item_needs_ctx(const struct mem_plan *p, uint32_t item);
/* Largest stack of the bodies copied into function @item, and the
 * thread-local registers they use (calls_local()). */
int mem_item_local(const struct mem_plan *p, uint32_t item,
		   struct func_locals *l);
/* egpu memcheck's check at a site (memcheck_site.c). */

/* The device runtime's functions the check copies (lib/device/
 * memcheck.cu): the lookup, and the report of a bad shared or local
 * access. */
#define MC_FIND_FUNC "egpu_dev_mc_find"
#define MC_WINDOW_FUNC "egpu_dev_mc_window"
/* Global sites per function that remember the allocation they passed. */
#define MC_CACHED_MAX 16
/* Runs of shared sites per function that remember that they passed (a
 * predicate each, live through their loop: the SM has seven, and the
 * kernel's own code needs them). */
#define MC_HOISTED_MAX 2 /* at most 32: a bit each in mc_emit_resets */

/* What the check needs of one function. */
struct mc_func {
	/* Its frame, for local accesses: the kernel's __local_depot (token)
	 * and bytes; frame_ok: checked (a kernel whose only .local is the
	 * depot; never a .func, which may be handed its caller's frame). */
	uint32_t depot;
	uint32_t depot_size;
	bool frame_ok;
	bool shared;       /* a site checks shared memory: its end at entry */
	bool global;       /* a site checks global memory */
	uint64_t cell;     /* ptx_memcheck.cell */
	uint32_t ncached;  /* sites given a range cache */
	uint32_t nhoisted; /* runs of shared sites given a passed predicate */
	uint8_t *in_loop;  /* per statement: a backward branch runs it again */
	/* What each instruction names outside its [ ] addresses (so may
	 * write), by text then statement (mc_index_names) */
	struct mc_named *named;
	size_t nnamed;
};

/* 0 or EGPU_ENOMEM; mc_func_free() even on error. */
int mc_func_make(const struct ptx_module *m, const struct ptx_func *f,
		 struct mc_func *fn);
void mc_func_free(struct mc_func *fn);
/* @fn->named for function @f, which mc_site_hoist() and
 * mc_emit_resets() read: 0 or EGPU_ENOMEM. */
int mc_index_names(const struct ptx_module *m, const struct ptx_func *f,
		   struct mc_func *fn);
/* Whether access @op gets a check in function @fn. */
bool mc_site_checked(const struct mem_op *op, const struct mc_func *fn);
/* Site @s's range cache (a global or generic access in a loop, while
 * there are slots), or -1; notes what its function's entry must set. */
int mc_site_plan(struct mc_func *fn, const struct mem_site *s);

/*
 * Groups of the shared sites [0, @n) of @s in one function, for which
 * @want is true: sites in one straight stretch of code (no label, branch,
 * call or scope between) addressing off one base register that nothing
 * between writes, unguarded, of the head's kind, size and line, their
 * offsets and indices in steps (the first two members set them), are
 * checked together at the first, the group's head. *@group: the head's
 * index for each site, -1 alone.
 */
void mc_plan_groups(const struct ptx_module *m, const struct mem_site *s,
		    size_t n, const bool *want, int *group);
/*
 * Site @i of the function's sites @s: its passed predicate (%P_mcv<k>),
 * or -1, given those of the sites before it (@hoist). A shared access of
 * a fixed size in a loop whose base register nothing in the loop writes
 * passes again once it has passed (the window is fixed per launch) until
 * the base is written (mc_emit_resets). Such sites in one straight
 * stretch of code, a run, share one predicate, set at the run's first
 * site when all of them pass (mc_emit_hoist_skip). The caller offers
 * only uncontained group heads whose only probe is memcheck's.
 */
int mc_site_hoist(struct mc_func *fn, const struct ptx_module *m,
		  const struct mem_site *s, size_t i, const int *hoist);
/* After every statement of the function of sites @s [0, @n) that may
 * write the base of a site with a passed predicate (@hoist), that
 * predicate cleared. 0 or EGPU_ENOMEM. */
int mc_emit_resets(const struct ptx_module *m, const struct mc_func *fn,
		   const struct mem_site *s, size_t n, const int *hoist,
		   const char *prefix, struct edits *e);

struct mc_site_code {
	const struct ptx_module *m;
	const struct mem_site *s;
	/* the function's sites and groups (mc_plan_groups); s is one */
	const struct mem_site *all;
	const int *group;
	size_t nall;
	const char *prefix;
	uint32_t site;   /* index in the module: names its labels */
	uint32_t number; /* egpu_mem_ctx.site */
	const struct ptx_memcheck *mc;
	const struct inline_func *mc_find;   /* mem_req's */
	const struct inline_func *mc_window;
	const struct mc_func *fn;
	int cache;       /* mc_site_plan() */
	const int *hoist; /* mc_site_hoist(), of all */
	bool contain;
};

/* Whether @fn's entry has code of memcheck's (mc_emit_entry). */
bool mc_func_has_entry(const struct mc_func *fn);
/* At the function's entry: the range caches (empty), the passed
 * predicates (false), the end of shared memory and, in a function
 * without caches, the index the kernel checks against, in function-wide
 * registers. */
void mc_emit_entry(struct strbuf *sb, const char *prefix,
		   const struct mc_func *fn);
/* The check, inside the site's scope, %P_m0 holding the address; with
 * containment it sets %P_mcb on a bad access. */
void mc_emit_check(struct strbuf *sb, const struct mc_site_code *c);
/* Around the site's whole code, where it has a passed predicate: at its
 * run's first site, the run's test setting it; the branch over the code
 * while it holds, and the label after the code. */
void mc_emit_hoist_skip(struct strbuf *sb, const struct mc_site_code *c);
void mc_emit_hoist_label(struct strbuf *sb, const char *prefix,
			 uint32_t site);
/* Containment: a scope declaring %P_mcb (false), opened before the
 * site's code; after it, the branch over the instruction; after the
 * instruction, its destinations zeroed and the scope closed. */
void mc_emit_open(struct strbuf *sb, const char *prefix);
void mc_emit_skip(struct strbuf *sb, const char *prefix, uint32_t site);
void mc_emit_after(struct strbuf *sb, const struct ptx_module *m,
		   const struct mem_site *s, const char *prefix,
		   uint32_t site);

/* The splicer's trace mode at a site (trace_site.c). */

/* The device runtime's functions its code calls (lib/device/runtime.cu). */
#define TR_SITE_FUNC "egpu_dev_trace_site"
#define TR_CLAIM_FUNC "egpu_dev_trace_claim"
#define TR_ALONE_FUNC "egpu_dev_trace_alone"

struct tr_site_code {
	const struct ptx_module *m;
	const struct mem_site *s;
	const char *prefix;
	uint32_t site;   /* index in the module: names its labels */
	uint32_t number; /* egpu_mem_ctx.site: the record's site */
	const struct ptx_trace *tr;
	bool kernel;     /* in a kernel: the lanes' span registers are there */
	uint32_t first;  /* slots of a lane's first span (tr_first_slots) */
	bool shorts;     /* a site of the kernel may store a short record */
};

/*
 * Where the site's record ends in a span, in half slots, when it starts
 * at @halves: a short record's half, else a slot at the next slot (the
 * runtime's record: one at least).
 */
uint32_t tr_record_end(const struct tr_site_code *c, uint32_t halves);
/* Whether the site's record may be short (an 8-byte one). */
bool tr_may_be_short(const struct tr_site_code *c);
/*
 * Slots of a lane's first span that holds @halves half slots of records
 * after its header, within the ring's least and most.
 */
uint32_t tr_first_slots(const struct ptx_trace *tr, uint32_t halves);

/* The record of the access at %P_m0, inside the site's scope. */
void tr_emit_site(struct strbuf *sb, const struct tr_site_code *c);
/*
 * A kernel with traced sites: its lanes' span registers set at its entry,
 * each lane's span published before every exit and, with @calls (a .func
 * traces too: its records go to spans claimed later) or a lossless ring,
 * before every call; in a lossless ring also before every wait and split
 * (trace_wait.c). @item: the kernel's item, which names its labels.
 */
int tr_emit_kernel(const struct ptx_module *m, uint32_t item,
		   const char *prefix, const struct ptx_trace *tr, bool calls,
		   struct edits *e);

/*
 * .maxnreg before traced kernel @item's body, unless it sets one: the
 * cap ptx_trace.max_registers or .plain_regs gives (trace_regs.c).
 */
int tr_cap_registers(const struct ptx_module *m, uint32_t item,
		     const struct ptx_trace *tr, struct edits *e);

/* What instruction @st does to a lossless trace's open span (trace_wait.c). */
enum tr_wait {
	TR_NO_WAIT,
	TR_WAITS,     /* waits for other threads, or splits the warp: let go */
	TR_MAY_SPLIT, /* a guarded bra: let go when the lanes differ */
	TR_EXIT,      /* not from tr_wait_of (stmt_is_exit): publish only */
};
enum tr_wait tr_wait_of(const struct ptx_module *m, const struct ptx_stmt *st);

/* The instruction texts probes read (module-scope strings), at @off. */
int mem_emit_texts(const struct mem_plan *p, const struct ptx_module *m,
		   const char *prefix, uint32_t off, struct edits *e);
/* The text of site @i's instruction, malloc'ed in *out. */
int mem_site_text(const struct mem_plan *p, const struct ptx_module *m,
		  size_t i, char **out);

#endif
