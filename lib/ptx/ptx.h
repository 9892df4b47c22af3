/* SPDX-License-Identifier: MIT */
/*
 * PTX instrumentation: parse an application's PTX module, call probe
 * functions at the entry and at every exit of chosen kernels, and link the
 * modules that define those functions (JIT output, the device runtime) into
 * it. The result is one PTX module to hand to cuModuleLoadData*.
 *
 * Probe functions have the JIT's signature
 *   .func (.param .b64 ret) NAME(.param .b64 ctx, .param .b64 ctx_len)
 * and receive a generic pointer to a struct egpu_kernel_ctx
 * (include/egpu/ctx.h) built at each site in .shared memory; their return
 * value is ignored. Their bodies are copied into the sites where possible
 * (inlined), else called. See docs/ptx.md for the insertion, inlining and
 * linking rules.
 */
#ifndef EGPU_PTX_H
#define EGPU_PTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

/* One attach request: call @func at @point of every kernel @kernel names. */
struct ptx_attach {
	/*
	 * Mangled name, demangled signature ("vectorAdd(float const*, int)"),
	 * qualified name ("ns::vectorAdd", "scale<float>"), base name
	 * ("vectorAdd"), or a glob (fnmatch) over any of these forms.
	 */
	const char *kernel;
	int point;        /* EGPU_ATTACH_ENTRY, _EXIT or _MEM */
	const char *func; /* probe function defined by one of the modules */
	/*
	 * The probe never reads its ctx: the site passes (NULL, 0) and
	 * builds none. (A probe whose body never names its parameters, or
	 * whose copies read the ctx's values as constants, gets none built
	 * either way.)
	 */
	bool no_ctx;
	/*
	 * Call the probe instead of copying its body into each site. By
	 * default the body is copied in (inlined) where it can be, so ptxas
	 * optimises it with the kernel; a body that cannot be is called.
	 */
	bool no_inline;
	/* EGPU_ATTACH_MEM: masks of (1u << EGPU_SPACE_*) and (1u <<
	 * EGPU_MEM_*) the probed instructions must match; 0: all. */
	uint32_t mem_spaces;
	uint32_t mem_kinds;
	/* Program name for messages; NULL: func. */
	const char *label;
	/* A pattern matching no kernel is an error (EGPU_ENOENT); else a
	 * warning in the report. */
	bool strict_match;
	/*
	 * The probe may end its thread (helper exit_thread). At the entry,
	 * kernels with barriers that exited threads cannot release are
	 * refused (EGPU_ENOTSUP).
	 */
	bool may_exit;
	/*
	 * EGPU_ATTACH_MEM: bytes of copies of this probe one module may
	 * receive. Past it, the functions with the most sites call the probe
	 * instead (docs/ptx.md, "Bounding the growth"). 0: the default,
	 * ptx_mem_inline_default(); SIZE_MAX: no bound.
	 */
	size_t mem_inline_limit;
	/*
	 * EGPU_ATTACH_ENTRY/_EXIT: the probe reads ctx->params bytes [0,
	 * params_reach) directly (the verifier's bound). A kernel with fewer
	 * parameter bytes gets no probe: a warning, or with strict_match an
	 * error (EGPU_EINVAL).
	 */
	uint32_t params_reach;
	/*
	 * EGPU_ATTACH_MEM: not a probe but egpu memcheck's check of each
	 * global, shared, local and generic access (docs/memcheck.md),
	 * copying the device runtime's egpu_dev_mc_* (lib/device/
	 * memcheck.cu), which a linked module must define; @func is not
	 * used. Put it after the probes: they see the access first.
	 */
	const struct ptx_memcheck *memcheck;
	/*
	 * EGPU_ATTACH_MEM: not a probe but the splicer's trace mode: every
	 * selected access a compact record in a span of @trace's ring
	 * (docs/events.md, "The splicer's trace mode"), the common case
	 * inline, the rest calling the device runtime's egpu_dev_trace_*,
	 * which a linked module must define; @func is not used.
	 */
	const struct ptx_trace *trace;
};

/* The splicer's trace mode (ptx_attach.trace). */
struct ptx_trace {
	uint64_t ring; /* the ring map's handle, as the runtime's helpers take it */
	/* What publishing a span inline takes: a system-scope fence (a ring
	 * in host memory) or a GPU-scope one, then the header, {len, flags}
	 * with len the span's bytes less @hdr_size (maps/span_layout.h). */
	bool sys_fence;
	uint32_t span_flags;
	uint32_t hdr_size;
	/*
	 * .maxnreg for each traced kernel that sets none. @max_registers
	 * where not 0; else, where @plain_regs knows the kernel, the count
	 * the untraced kernel takes made a cap that costs no occupancy
	 * (ptx_trace_reg_cap); else none, ptxas decides.
	 */
	uint32_t max_registers;
	/* Registers a thread of kernel @name (mangled) takes untraced, 0 not
	 * known; called once per traced kernel. */
	uint32_t (*plain_regs)(void *user, const char *name);
	void *plain_user;
	uint32_t sm_regs;    /* registers of an SM, for @plain_regs' caps */
	uint32_t sm_threads; /* threads an SM holds */
	uint32_t reg_floor;  /* no cap below: the device runtime's count */
	/*
	 * The leader's claim of a span inline (trace_site.c): the ring's
	 * shards as its struct dev_ring lays them out, folded. @shards 0:
	 * no inline claim (a ring too small for a span: mem_trace.c's
	 * fold_claim), egpu_dev_trace_claim instead.
	 */
	struct {
		uint32_t shards;   /* a thread's: %smid's, as ring_shard_index */
		uint64_t ctr;      /* shard 0's counters: reserved, then */
		uint32_t prod_off; /* prod and */
		uint32_t cons_off; /* the cached consumer position this far on */
		uint64_t ctr_step; /* bytes to the next shard's counters */
		uint64_t data;     /* shard 0's records */
		uint64_t data_step;
		uint64_t mask;     /* a shard's capacity - 1 */
		uint32_t tag;      /* the ring's tag in a lane's state */
		uint32_t hdr_flags; /* of a span's header before it is published */
		uint32_t skip_flags; /* of a record the consumer skips */
		uint32_t least;    /* slots of a span at least */
		uint32_t first;    /* slots of a lane's first span */
		uint32_t most;     /* slots of a span at most */
	} claim;
	/*
	 * Counting an inline publish (a ring in GPU memory: span_flags has
	 * RING_COUNTED, docs/events.md "Copied once"): after the fence and
	 * before the header, the span's bytes are added to the
	 * published-bytes word of the shard that holds it, @word + shard *
	 * @step, the shard its header's address gives: ((header - @data) *
	 * @m) >> @k, @data shard 0's records (maps/span_layout.h's
	 * span_shard_at). @word 0: spans are not counted.
	 */
	struct {
		uint64_t word;
		uint64_t step;
		uint64_t data;
		uint32_t m, k;
	} done;
	/* The ring is lossless: a lane publishes its span before it waits
	 * for other threads and before its warp splits (trace_wait.c). */
	bool lossless;
};

/* The most registers a thread may have (a .maxnreg's bound). */
#define PTX_REGS_MAX 255

/*
 * The register cap of a traced kernel whose untraced form takes @plain
 * registers a thread: the most registers at which an SM still holds as
 * many of its blocks as at @plain, so that the trace's registers cost no
 * occupancy (docs/events.md, "Registers: the plain kernel's occupancy").
 * Blocks of @threads threads (the kernel's .maxntid or .reqntid); 0, not
 * declared: any size, so only @plain's allocation granule (8 registers)
 * is sure to keep every size's occupancy. At least @floor (what the
 * device runtime the kernel calls takes), at most PTX_REGS_MAX.
 */
uint32_t ptx_trace_reg_cap(uint32_t plain, uint32_t threads,
			   uint32_t sm_regs, uint32_t sm_threads,
			   uint32_t floor);

/*
 * The caps the trace put on kernels of instrumented @ptx lowered to @max
 * in place (0: none), where an application's JIT option limits registers
 * to fewer: a .maxnreg would otherwise win over it.
 */
void ptx_trace_caps_lower(char *ptx, uint32_t max);

/* egpu memcheck's check (ptx_attach.memcheck). */
struct ptx_memcheck {
	bool contain;    /* a bad access is skipped, a load then giving 0 */
	/* device addresses the check reads inline: the index cell, the
	 * state words, the lookup hints (core/memcheck_layout.h) */
	uint64_t cell;
	uint64_t states;
	uint64_t hints;
};

/* A PTX module to link into the application's: JIT output, runtime. */
struct ptx_text {
	const char *name; /* for messages, e.g. the program's name */
	const char *text;
	size_t len;
};

/* What happened to one kernel of the application. */
struct ptx_kernel_info {
	char *name;            /* mangled, as in the PTX */
	char *demangled;       /* full demangled signature, or the name */
	uint32_t id;           /* egpu_kernel_ctx.kernel_id */
	uint32_t entry_points; /* 1 if entry probes were inserted */
	uint32_t exit_points;  /* ret/exit instructions given exit probes */
	uint32_t programs;     /* attach requests applied to this kernel */
	uint32_t inlined;      /* probe bodies copied in, over all its sites */
	uint32_t mem_points;   /* memory instructions probed in it and the
				  .funcs it calls */
};

/* A memory instruction given memory probes (egpu_mem_site). */
struct ptx_mem_site {
	uint32_t kernel_id;  /* or EGPU_MEM_KERNEL_SHARED */
	char *function;      /* .entry or .func holding it */
	char *text;          /* the instruction as in the input */
	uint32_t ptx_line;
	uint32_t line;       /* from the last .loc before it, or 0 */
	const char *file;    /* that .loc's file (in .file), or NULL */
	uint32_t size;       /* bytes; 0: a register's value */
	uint16_t kind;       /* EGPU_MEM_* */
	uint16_t space;      /* EGPU_SPACE_* */
};

struct ptx_report {
	/* Every .entry defined by the application, in order: kernels[id -
	 * the first id]. */
	struct ptx_kernel_info *kernels;
	size_t nkernels;
	unsigned version_major; /* .version of the output */
	unsigned version_minor;
	size_t linked_funcs;    /* function definitions linked in */
	/* Memory sites: mem_sites[i] has egpu_mem_ctx.site site_base + i. */
	struct ptx_mem_site *mem_sites;
	uint32_t site_base;
	size_t nmem_sites;
	/* Memory instructions of probed functions left unprobed (ldmatrix,
	 * call-sequence .param ...: docs/ptx.md). */
	size_t mem_skipped;
	/* Probes at memory sites called instead of copied because their
	 * copies would have passed ptx_attach.mem_inline_limit. */
	size_t mem_called;
	char **files;           /* .file names that sites point to */
	size_t nfiles;
	/* Requests whose pattern matched no kernel: "prog 'P': no kernel
	 * matches 'K'; kernels: ...", and kernels a request skipped because
	 * they have fewer parameter bytes than it reads (params_reach). */
	char **warnings;
	size_t nwarnings;
};

/*
 * How kernels and memory sites are numbered when modules share one
 * numbering (a context's: lib/api/kernels.c).
 */
struct ptx_numbering {
	/* Id of the module's kernel @index (its .entry in text order), called
	 * once per kernel in order; never EGPU_MEM_KERNEL_SHARED. */
	int (*kernel_id)(void *user, uint32_t index, const char *mangled,
			 const char *demangled, uint32_t *id);
	/* Number of the first of the module's @nsites memory sites. */
	int (*site_base)(void *user, uint32_t nsites, uint32_t *base);
	void *user;
};

/*
 * Instrument @app_ptx for @reqs, linking @modules into it; the result is
 * appended to @out (NUL-terminated) and @report (may be NULL) describes
 * it; free it with ptx_report_free(). With no requests and no modules the
 * output is the input, byte for byte.
 *
 * Errors: EGPU_EFORMAT for unparsable PTX ("NAME: PTX line L col C: ..."),
 * EGPU_ENOENT for a strict pattern matching no kernel or an undefined probe or
 * extern function, EGPU_EEXIST for two different definitions of a symbol,
 * EGPU_ENOTSUP for inputs this instrumentation cannot serve (e.g. a target
 * below sm_70), EGPU_EINVAL for bad arguments.
 */
int ptx_instrument(const char *app_ptx, size_t len,
		   const struct ptx_attach *reqs, size_t nreq,
		   const struct ptx_text *modules, size_t nmod,
		   struct strbuf *out, struct ptx_report *report);
/* ptx_instrument() numbering kernels and sites by @num (NULL: kernels by
 * their index in the module, sites from 0). */
int ptx_instrument_num(const char *app_ptx, size_t len,
		       const struct ptx_attach *reqs, size_t nreq,
		       const struct ptx_text *modules, size_t nmod,
		       const struct ptx_numbering *num, struct strbuf *out,
		       struct ptx_report *report);

void ptx_report_free(struct ptx_report *report);

/* Memory probes' copies a module of @len bytes may receive by default:
 * its own size, at least 16 MiB. */
size_t ptx_mem_inline_default(size_t len);

/*
 * Instrumented @ptx (NUL-terminated) cut in two to be compiled apart and
 * linked (split.c): @app gets the application's code with .extern
 * declarations of what it uses of the linked block, @rt the header and
 * the linked block (the device runtime, probes) with those symbols made
 * .visible. EGPU_ENOENT when no traced site calls the trace mode's
 * runtime (nothing to gain: load it whole), EGPU_ENOTSUP when the linked
 * code uses the application's symbols, EGPU_EFORMAT for unparsable text.
 */
int ptx_split_runtime(const char *ptx, size_t len, struct strbuf *app,
		      struct strbuf *rt);

/*
 * The application module @text for a GPU older than sm_70, with its
 * .target raised to sm_@sm (and .version to the first ISA that accepts
 * it), appended to @out. EGPU_ENOTSUP naming the line where the module
 * uses an instruction sm_70 removed (shfl or vote without .sync).
 */
int ptx_retarget(const char *text, size_t len, unsigned sm, struct strbuf *out);

/* Whether kernel @mangled answers to @pattern, as ptx_attach.kernel. */
int ptx_kernel_matches(const char *mangled, const char *pattern, bool *match);

#endif
