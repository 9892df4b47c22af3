/* SPDX-License-Identifier: MIT */
/* The objects behind the public handles. */
#ifndef EGPU_API_INTERNAL_H
#define EGPU_API_INTERNAL_H

#include <pthread.h>

#include "core/core.h"
#include "core/helpers.h"
#include "jit/jit.h"
#include "maps/dev_map.h"
#include "maps/host_map.h"
#include "maps/ring.h"
#include "object/object.h"
#include "ptx/ptx.h"

struct egpu_ctx {
	struct egpu_logger log;
	char sm[16];
	bool offline;           /* maps get placeholder addresses */
	bool no_inline;         /* call probes instead of copying them in */
	size_t mem_inline_limit; /* memory probes' copies per module, 0: default */
	uint32_t thread_slots;  /* per-thread map slots on the GPU, 0: default */
	struct egpu_obj *objs;  /* every open object, for egpu_ctx_free() */
	struct egpu_link *links;
	uint32_t next_probe_id; /* names linked probe functions uniquely */
	void *cu_ctx;           /* CUcontext holding the maps, once bound */
	struct ptx_report last; /* backs the arrays of the last egpu_report */
	struct egpu_kernel_report *last_kernels;
	struct egpu_mem_site *last_mem_sites;
	struct print_state *print; /* GPU printing (gpu_print.c), made on first use */
	struct clock_state *clock; /* host↔GPU clock calibration (clock.c) */
	/* User helpers, newest first (helper.c); the list only grows. */
	const struct user_helper *helpers;
	struct call_state *calls;  /* their GPU calls (call_ring.c), lazily */
	struct kernel_table *ktab; /* kernel ids and site numbers (kernels.c) */
	struct jit_cached *jit_cache; /* probe translations (jit_cache.c) */
	struct memcheck_state *memcheck; /* egpu_memcheck_enable(), or NULL */
	struct mem_trace_state *mem_trace; /* egpu_mem_trace_enable(), or NULL */
};

struct egpu_link {
	struct egpu_ctx *ctx;
	struct egpu_link *next, *prev;
	struct egpu_prog *prog;
	char *kernel;
	enum egpu_attach_point at;
	uint32_t mem_spaces;    /* EGPU_ATTACH_MEM: egpu_attach_opts masks */
	uint32_t mem_kinds;
	bool strict;            /* matching no kernel is an error */
};

struct egpu_map {
	struct egpu_obj *obj;
	const struct map_spec *spec;
	struct host_map *host;  /* CPU back end; the host API without a GPU */
	struct dev_map *dev;    /* GPU memory, once the object uses the GPU */
	struct event_ring *ring; /* ring maps: their records (maps/ring.h) */
};

struct egpu_prog {
	struct egpu_obj *obj;
	const struct prog_spec *spec;
	pthread_mutex_t lock;    /* guards the lazily built host code */
	struct jit_host *host;
	struct jit_host *host_gpu; /* the same over the maps in GPU memory */
	uint32_t probe_id;       /* 0 until linked into a module */
	unsigned verified;       /* bit per attach point the verifier accepted */
	int refused;             /* load verdict at its own attach point: 0 or EGPU_E* */
	bool malformed;          /* refused by the structural pass: everywhere */
	char *refusal;           /* why, when refused (the verifier's message) */
	uint32_t verified_ctx;   /* ctx size of the accepted direct run */
	uint32_t params_reach;   /* ctx->params bytes an entry/exit probe reads */
	bool *never_stack;       /* the verifier's, once it accepted (jit.h) */
	void *gpu_mod;           /* CUmodule of direct GPU runs, once loaded */
	void *gpu_fn;            /* its CUfunction */
};

struct egpu_obj {
	struct egpu_ctx *ctx;
	struct egpu_obj *next, *prev;
	char *name;
	int abi;
	const struct user_helper *users; /* the context's helpers at load */
	struct object_spec spec;
	struct egpu_prog *progs;
	struct egpu_map *maps;
};

/*
 * Translation (translate.c). The JIT input of @prog with map table @maps
 * (one entry per map of its object); the table for host code; the table
 * for GPU code: where the maps are in GPU memory (moved there before by
 * obj_maps_to_gpu; EGPU_EINVAL if not), or placeholders for an offline
 * context. None of them allocates.
 */
void prog_jit_input(const struct egpu_prog *prog, const struct jit_map *maps,
		    struct jit_input *in);
void obj_host_jit_maps(const struct egpu_obj *obj, struct jit_map *out);
/* The table for host code over the maps in GPU memory (moved there). */
int obj_host_gpu_jit_maps(struct egpu_obj *obj, struct jit_map *out);
int obj_gpu_jit_maps(const struct egpu_obj *obj, struct jit_map *maps);

/* Translated PTX (malloc'ed) and what it calls in the device runtime. */
struct prog_ptx_out {
	char *ptx;
	size_t len;
	unsigned needs; /* enum jit_need */
};
/* PTX of @prog as function @func for @sm with map table @maps. */
int prog_ptx(struct egpu_prog *prog, const struct jit_map *maps,
	     const char *func, const char *sm, bool kernel,
	     struct prog_ptx_out *out);
/* The same with the GPU map table (obj_gpu_jit_maps). */
int prog_gpu_ptx(struct egpu_prog *prog, const char *func, const char *sm,
		 bool kernel, struct prog_ptx_out *out);

/* Modules runtime_modules() may add: runtime, print ring, call ring. */
#define RUNTIME_MODULES_MAX 3
/*
 * The modules PTX calling what @needs says (enum jit_need) must have
 * linked in, into @out: none, or the device runtime and the definitions
 * of its print ring (gpu_print.c) and call ring (call_ring.c). *nout says how
 * many.
 */
int runtime_modules(struct egpu_ctx *ctx, unsigned needs,
		    struct ptx_text out[RUNTIME_MODULES_MAX], size_t *nout);
/* Modules memcheck_modules() may add. */
#define MEMCHECK_MODULES_MAX 2
/*
 * egpu memcheck (memcheck.c): when enabled, the request checking every
 * access (appended to @reqs at *nreq) and the modules it needs (the
 * device runtime's check, the definitions of its buffers) into @out;
 * *nout says how many.
 */
void memcheck_request(const struct egpu_ctx *ctx, struct ptx_attach *reqs,
		      size_t *nreq);
void memcheck_modules(const struct egpu_ctx *ctx,
		      struct ptx_text out[MEMCHECK_MODULES_MAX], size_t *nout);
void memcheck_free(struct egpu_ctx *ctx);
struct mc_names;
/* An egpu_memcheck enabling the check in a context: the names of the
 * sites instrumented go to @names, and *@ctx is set to NULL when the
 * context stops checking for it (freed, or enabled for another). */
struct memcheck_user {
	struct mc_names *names;
	struct egpu_ctx **ctx;
};
int memcheck_enable_for(egpu_ctx *ctx, const struct egpu_memcheck_opts *opts,
			const struct memcheck_user *user);
/* The sites of an instrumentation, named for the checker enabled. */
void memcheck_sites(const struct egpu_ctx *ctx, const struct egpu_report *rep);

/*
 * The splicer's trace mode (mem_trace.c): when enabled, the request
 * recording every selected access (appended to @reqs at *nreq; its ring's
 * maps moved to GPU memory first), and in *@needs the device runtime.
 */
int mem_trace_request(struct egpu_ctx *ctx, struct ptx_attach *reqs,
		      size_t *nreq, unsigned *needs);
/*
 * Instrumented @ptx loaded in the current context (module_link.c): a
 * traced module linked with the runtime compiled apart (egpu_ptx_link),
 * with a warning and as one module if that fails; any other as one.
 */
int module_load_instrumented(struct egpu_ctx *ctx, const char *ptx,
			     CUmodule *mod);
/*
 * The registers a thread the device runtime is compiled to apart from a
 * traced module (egpu_mem_trace_opts.runtime_max_registers, 0 there: the
 * default); 0: not apart, one module.
 */
unsigned mem_trace_runtime_regs(const struct egpu_ctx *ctx);
/*
 * Around instrumenting @ptx (NUL-terminated, kept until the end): traced
 * kernels are capped at registers that keep their untraced occupancy,
 * the untraced ones the driver's count for @ptx, compiled when a traced
 * kernel first asks (egpu_mem_trace_opts.max_registers 0, online).
 */
void mem_trace_module_begin(struct egpu_ctx *ctx, const char *ptx);
void mem_trace_module_end(struct egpu_ctx *ctx);
void mem_trace_free(struct egpu_ctx *ctx);
/* The handle GPU code reaches map @m by (translate.c): in GPU memory
 * (moved there now), or a placeholder for an offline context. */
int map_gpu_handle(struct egpu_map *m, uint64_t *handle);

/*
 * A loadable module running @prog once: its PTX with the one-thread
 * `FUNC_kernel` wrapper and, where it calls it, the device runtime.
 */
int prog_kernel_ptx(struct egpu_prog *prog, const char *func, const char *sm,
		    char **ptx);

int prog_run_gpu(struct egpu_prog *prog, struct egpu_run_opts *opts);
/*
 * Verify @prog for attach point @at (EGPU_ATTACH_NONE: a direct run with
 * @ctx_size bytes at r1), once per use; EGPU_EVERIFY says why not.
 */
int prog_verify(struct egpu_prog *prog, enum egpu_attach_point at,
		uint32_t ctx_size);
/* Unload the module of direct GPU runs, if any. */
void prog_gpu_unload(struct egpu_prog *prog);
/*
 * Give every map of @obj its GPU memory in the current CUDA context, the
 * first time (gpu_maps.c); binds the context when the object has maps.
 * Nothing for an offline context. ctx_maps_to_gpu() does it for every
 * object with a linked program. Called before translating for the GPU.
 */
int obj_maps_to_gpu(struct egpu_obj *obj);
int ctx_maps_to_gpu(struct egpu_ctx *ctx);
/* Remove every link of @obj's programs (the object is closing). */
void links_drop_obj(struct egpu_ctx *ctx, const struct egpu_obj *obj);
/* Tie @ctx to the current CUDA context (the first time), or check it is it. */
int ctx_bind_cuda(struct egpu_ctx *ctx);
/*
 * Clock calibration (clock.c): once, at the first use that needs it once
 * the context is bound (module load, GPU run; the first clock read
 * calibrates by itself); failures are logged, egpu_clock_sync() tries
 * again. Translating never calibrates. The state is freed with the
 * context.
 */
void clock_ctx_start(struct egpu_ctx *ctx);

/*
 * Kernel identity (kernels.c): the numbering of one module's kernels and
 * memory sites in its context, for ptx_instrument_num(). Lives while the
 * call runs.
 */
struct kernel_numbering {
	struct egpu_ctx *ctx;
	uint32_t module;
	struct ptx_numbering num;
};
int kernels_numbering(struct egpu_ctx *ctx, const char *ptx, size_t len,
		      struct kernel_numbering *kn);
void kernels_free(struct egpu_ctx *ctx);
/*
 * Translate once (jit_cache.c): the PTX of probe @prog as function @func
 * for target @sm, translated at the first request and kept by the context
 * (keyed by program, function, target and the map addresses baked in).
 * out->text belongs to the cache: valid until the program's object
 * closes (jit_cache_drop_prog) or the context is freed. Adds the
 * enum jit_need bits of the PTX to *@needs.
 */
int jit_cache_probe(struct egpu_ctx *ctx, struct egpu_prog *prog,
		    const char *func, const char *sm, struct ptx_text *out,
		    unsigned *needs);
void jit_cache_drop_prog(struct egpu_ctx *ctx, const struct egpu_prog *prog);
void jit_cache_free(struct egpu_ctx *ctx);
/* Translations the context keeps. */
size_t jit_cache_size(const struct egpu_ctx *ctx);
/* Add @size bytes of @val into @sum word by word (egpu_map_lookup_sum's
 * words). */
void words_add(void *sum, const void *val, uint32_t size);
void clock_ctx_free(struct egpu_ctx *ctx);

/*
 * A context's own ring (ctx_ring.c): a host ring mapped into the GPU and
 * its device struct. ctx_ring_make() makes it in @ctx's CUDA context
 * (under the caller's lock), once, when probes use it (@wanted) and the
 * PTX will run (a context not offline), else does nothing;
 * ctx_ring_module() gives the module defining device variable @var as its
 * address (0 before it is made), text kept in @cr until the next call.
 */
struct ctx_ring {
	struct event_ring *ring; /* published with release, read with acquire */
	uint64_t dev;            /* CUdeviceptr of its struct dev_ring */
	void *cu_ctx;
	char module[256];
};
int ctx_ring_make(struct egpu_ctx *ctx, struct ctx_ring *cr, bool wanted,
		  const char *name, uint64_t bytes);
struct ptx_text ctx_ring_module(struct ctx_ring *cr, const char *var,
				const char *what);
void ctx_ring_free(struct ctx_ring *cr);

/*
 * Printing from the GPU (gpu_print.c). The device runtime declares
 * egpu_dev_print_ring; every module linked with the runtime also links the
 * module print_ring_module() gives, which defines it: the context's print
 * ring when @prints (a probe calls a print helper; the ring is made then),
 * else 0. The text lives in @ctx until the next call.
 */
int print_ring_module(struct egpu_ctx *ctx, bool prints, struct ptx_text *out);
/*
 * Formatting print records (print_format.c). @lookup gives the host copy
 * of the bytes at a device address, how many there are and the object
 * holding them, or NULL.
 */
typedef const char *(*print_lookup_fn)(void *user, uint64_t addr, size_t *len,
				       const char **obj);
/*
 * The line of print record @data (@size bytes) into @sb, without a
 * trailing newline, and where it came from into @info; EGPU_EFORMAT for a
 * malformed record, EGPU_ENOMEM.
 */
int print_format(const void *data, size_t size, print_lookup_fn lookup,
		 void *user, struct strbuf *sb, struct egpu_print_info *info);
/* Deliver the print lines waiting in @ctx's print ring; no waiting. */
int print_drain(struct egpu_ctx *ctx);
/* Deliver what is left, then free the print ring (egpu_ctx_free). */
void print_ctx_free(struct egpu_ctx *ctx);
/*
 * User helpers (helper.c, helper_sig.c, call_ring.c). helper_sig_parse()
 * fills @u's return, argument kinds and sizes from an
 * egpu_helper_register() signature; helper_call() calls @u through libffi
 * with @args (buffers as addresses). The call ring works like the print
 * ring: every module linked with the runtime also links the module
 * call_ring_module() gives, defining egpu_dev_call_ring (made when
 * @calls: a probe calls a user helper; a dispatcher thread starts then).
 */
int helper_sig_parse(const char *sig, struct user_helper *u);
uint64_t helper_call(const struct user_helper *u, const uint64_t *args);
int call_ring_module(struct egpu_ctx *ctx, bool calls, struct ptx_text *out);
/* Make the calls left, stop the dispatcher, free ring and helpers. */
void helpers_ctx_free(struct egpu_ctx *ctx);
void call_ctx_free(struct egpu_ctx *ctx);

#endif
