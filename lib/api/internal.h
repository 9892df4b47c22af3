/* SPDX-License-Identifier: MIT */
/* The objects behind the public handles. */
#ifndef EGPU_API_INTERNAL_H
#define EGPU_API_INTERNAL_H

#include <pthread.h>

#include "core/core.h"
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
	uint32_t thread_slots;  /* per-thread map slots on the GPU, 0: default */
	struct egpu_obj *objs;  /* every open object, for egpu_ctx_free() */
	struct egpu_link *links;
	uint32_t next_probe_id; /* names linked probe functions uniquely */
	void *cu_ctx;           /* CUcontext holding the maps, once bound */
	struct ptx_report last; /* backs the arrays of the last egpu_report */
	struct egpu_kernel_report *last_kernels;
	struct egpu_mem_site *last_mem_sites;
	struct print_state *print; /* GPU printing (print.c), made on first use */
	struct clock_state *clock; /* host↔GPU clock calibration (clock.c) */
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
	const struct bpf_map_spec *spec;
	struct host_map *host;  /* CPU back end; the host API without a GPU */
	struct dev_map *dev;    /* GPU memory, once the object uses the GPU */
	struct event_ring *ring; /* ring maps: their records (maps/ring.h) */
};

struct egpu_prog {
	struct egpu_obj *obj;
	const struct bpf_prog_spec *spec;
	pthread_mutex_t lock;    /* guards the lazily built host code */
	struct jit_host *host;
	uint32_t probe_id;       /* 0 until linked into a module */
	unsigned verified;       /* bit per attach point the verifier accepted */
	int refused;             /* load verdict at its own attach point: 0 or EGPU_E* */
	char *refusal;           /* why, when refused (the verifier's message) */
	uint32_t verified_ctx;   /* ctx size of the accepted direct run */
	void *gpu_mod;           /* CUmodule of direct GPU runs, once loaded */
	void *gpu_fn;            /* its CUfunction */
};

struct egpu_obj {
	struct egpu_ctx *ctx;
	struct egpu_obj *next, *prev;
	char *name;
	int abi;
	struct bpf_object_spec spec;
	struct egpu_prog *progs;
	struct egpu_map *maps;
};

struct jit_map jit_map_make(const struct bpf_map_spec *spec, uint64_t addr,
			    uint64_t value_addr);
/* The jit_map table of @obj for host execution. */
void obj_host_jit_maps(const struct egpu_obj *obj, struct jit_map *out);
/* Fill a jit_input for @prog; @maps has one entry per map of its object. */
void prog_jit_input(const struct egpu_prog *prog, const struct jit_map *maps,
		    struct jit_input *in);
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
 * Give every map of @obj its GPU memory in the current CUDA context (once)
 * and fill @maps (one per map) with the device addresses. With an offline
 * context, fills placeholders instead.
 */
int obj_gpu_maps(struct egpu_obj *obj, struct jit_map *maps);
/* PTX of @prog for the GPU, its maps bound to GPU memory (or offline). */
int prog_gpu_ptx(struct egpu_prog *prog, const char *func, const char *sm,
		 bool kernel, char **ptx, size_t *len);
/*
 * The modules the @n translated @code modules need linked in, into @out:
 * none, or the device runtime and the definition of its print ring
 * (print.c). *nout says how many.
 */
int runtime_modules(struct egpu_ctx *ctx, const struct ptx_text *code,
		    size_t n, struct ptx_text out[2], size_t *nout);
/*
 * A loadable module running @prog once: its PTX with the one-thread
 * `FUNC_kernel` wrapper and, where it calls it, the device runtime.
 */
int prog_kernel_ptx(struct egpu_prog *prog, const char *func, const char *sm,
		    char **ptx);
/* Remove every link of @obj's programs (the object is closing). */
void links_drop_obj(struct egpu_ctx *ctx, const struct egpu_obj *obj);
/* Tie @ctx to the current CUDA context (the first time), or check it is it. */
int ctx_bind_cuda(struct egpu_ctx *ctx);
/*
 * Clock calibration (clock.c): at the first binding to a CUDA context
 * (failures are logged, egpu_clock_sync() tries again), and the state
 * freed with the context.
 */
void clock_ctx_start(struct egpu_ctx *ctx);
void clock_ctx_free(struct egpu_ctx *ctx);

/*
 * Printing from the GPU (print.c). The device runtime declares
 * egpu_dev_print_ring; every module linked with the runtime also links the
 * module print_ring_module() gives, which defines it: the context's print
 * ring when @prints (a probe calls a print helper; the ring is made then),
 * else 0. The text lives in @ctx until the next call.
 */
bool ptx_calls_print(const char *ptx);
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
 * Sleep-poll until @ready(@arg) (true) or @timeout_ms passed (false; < 0:
 * no limit), looking at first every 10 us, then less often, at least every
 * millisecond (ringbuf.c).
 */
bool poll_wait(bool (*ready)(void *), void *arg, int timeout_ms);

#endif
