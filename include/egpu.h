/* SPDX-License-Identifier: MIT */
/**
 * @file egpu.h
 * @brief libegpu: run eBPF programs inside NVIDIA GPU kernels.
 *
 * The only header an application needs. Every fallible call returns 0 (or a
 * non-negative count) on success and a negative ::egpu_error code on failure,
 * or NULL for constructors; egpu_errmsg() then returns a message that names
 * what failed and where. Options structs start with `size_t sz` (set it with
 * EGPU_OPTS()) so they can grow without breaking binary compatibility.
 * Handles are opaque; every free/close function accepts NULL.
 */
#ifndef EGPU_H
#define EGPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks the exported API; everything else in the library is hidden. */
#if defined(__GNUC__)
#define EGPU_API __attribute__((visibility("default")))
#else
#define EGPU_API
#endif

/** Major version of the library this header belongs to. */
#define EGPU_VERSION_MAJOR 0
/** Minor version of the library this header belongs to. */
#define EGPU_VERSION_MINOR 1
/** Patch version of the library this header belongs to. */
#define EGPU_VERSION_PATCH 0

/**
 * Declare and zero an options struct with its `sz` set, like libbpf's
 * LIBBPF_OPTS: `EGPU_OPTS(egpu_load_opts, o, .name = "probe");`
 *
 * The library refuses (EGPU_ENOTSUP) a struct with a non-zero byte after
 * the last field it knows (`TYPE__last_field`), trailing padding
 * included: a field a newer header put there is never ignored silently.
 * So a struct filled by hand is zeroed first (memset, calloc); this macro
 * does that where the compiler allows (gcc, clang), as LIBBPF_OPTS does.
 */
#if defined(__GNUC__) && !defined(__cplusplus)
#define EGPU_OPTS(TYPE, NAME, ...)                                            \
	struct TYPE NAME = __extension__({                                    \
		__builtin_memset(&NAME, 0, sizeof(struct TYPE));              \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };      \
	})
#else
#define EGPU_OPTS(TYPE, NAME, ...)                                            \
	struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }
#endif

/** Error codes. All are negative; 0 is success. */
enum egpu_error {
	EGPU_EINVAL = -1,   /**< invalid argument */
	EGPU_ENOMEM = -2,   /**< out of memory */
	EGPU_EIO = -3,      /**< a file could not be read or written */
	EGPU_EFORMAT = -4,  /**< malformed input: ELF, instructions, PTX */
	EGPU_EVERIFY = -5,  /**< a program was refused as unsafe */
	EGPU_EJIT = -6,     /**< translation to PTX or host code failed */
	EGPU_ENODEV = -7,   /**< no CUDA driver or no GPU */
	EGPU_ENOENT = -8,   /**< no such program, map, kernel or key */
	EGPU_E2BIG = -9,    /**< a map or buffer is full or too small */
	EGPU_ECUDA = -10,   /**< the CUDA driver returned an error */
	EGPU_ENOTSUP = -11, /**< valid, but not supported by this build */
	EGPU_EEXIST = -12,  /**< the key exists and BPF_NOEXIST was asked */
	EGPU_EBUSY = -13,   /**< the resource is in use (a trace runs) */
};

/** Message describing the last error on the calling thread ("" if none). */
EGPU_API const char *egpu_errmsg(void);
/**
 * Code of the last error on the calling thread (0 if none): what failed
 * when a constructor returned NULL.
 */
EGPU_API int egpu_errcode(void);
/** Short fixed description of an ::egpu_error code. */
EGPU_API const char *egpu_strerror(int err);
/** Library version as "MAJOR.MINOR.PATCH". */
EGPU_API const char *egpu_version(void);

/** Severity of a log message. */
enum egpu_log_level {
	EGPU_LOG_ERROR = 0,
	EGPU_LOG_WARN = 1,
	EGPU_LOG_INFO = 2,
	EGPU_LOG_DEBUG = 3,
};

/** Receives log messages; @p msg has no trailing newline. */
typedef void (*egpu_log_fn)(enum egpu_log_level level, const char *msg,
			    void *user);

/** Opaque library context: owns objects, maps and the GPU binding. */
typedef struct egpu_ctx egpu_ctx;
/** Opaque loaded eBPF object (one ELF file or one raw program). */
typedef struct egpu_obj egpu_obj;
/** Opaque program inside an ::egpu_obj. */
typedef struct egpu_prog egpu_prog;
/** Opaque map inside an ::egpu_obj. */
typedef struct egpu_map egpu_map;

/** Options for egpu_ctx_new(). */
struct egpu_ctx_opts {
	size_t sz;            /**< sizeof(struct egpu_ctx_opts) */
	const char *sm;       /**< PTX target, e.g. "sm_90"; NULL: "sm_90" */
	egpu_log_fn log;      /**< log callback; NULL: stderr */
	void *log_user;       /**< passed to @ref log */
	enum egpu_log_level log_level; /**< most verbose level delivered */
	/**
	 * Instrument for inspection only: maps get placeholder addresses so
	 * egpu_instrument_ptx() works without a GPU; egpu_module_load() and
	 * GPU runs are refused.
	 */
	bool offline;
	/** Per-thread slots of per-thread maps on the GPU; 0: 1<<20. */
	uint32_t thread_slots;
	/**
	 * Call probe functions from their sites instead of copying their
	 * bodies in (copies let ptxas optimise each probe in place; calls are
	 * for comparison and debugging).
	 */
	bool no_inline;
	/**
	 * Bytes of copies of one memory probe that one module may receive.
	 * Past it, the functions with the most memory sites call the probe
	 * instead of getting its body copied in (docs/ptx.md, "Bounding the
	 * growth"). 0: the module's own size, at least 16 MiB; SIZE_MAX: no
	 * bound.
	 */
	size_t mem_inline_limit;
};
#define egpu_ctx_opts__last_field mem_inline_limit

/**
 * Create a context. Needs no GPU: the CUDA driver is opened only when a GPU
 * operation first asks for it. Returns NULL on failure (see egpu_errmsg()).
 */
EGPU_API egpu_ctx *egpu_ctx_new(const struct egpu_ctx_opts *opts);
/** Free a context and everything loaded into it. NULL-safe. */
EGPU_API void egpu_ctx_free(egpu_ctx *ctx);
/**
 * Whether a CUDA driver and at least one GPU are usable. Returns 1 if so,
 * 0 if not (egpu_errmsg() then says why); never fails otherwise.
 */
EGPU_API int egpu_gpu_available(void);

/** Which helper conventions a program is built against. */
enum egpu_helper_abi {
	/** DESIGN helpers: 5 = ktime_get_ns (globaltimer) etc. */
	EGPU_HELPERS_GPU = 0,
	/**
	 * The bpf_conformance suite's convention: helper 5 returns its first
	 * argument ("unwind"); no other helper exists.
	 */
	EGPU_HELPERS_CONFORMANCE = 1,
};

/** Options for egpu_load(), egpu_load_mem() and egpu_load_insns(). */
struct egpu_load_opts {
	size_t sz;                   /**< sizeof(struct egpu_load_opts) */
	const char *name;            /**< object name for messages; NULL: file name */
	enum egpu_helper_abi helpers; /**< helper convention, default GPU */
	/**
	 * Fail the whole load when any probe is refused by the verifier.
	 * Default: the object loads, each refused program keeps its verdict
	 * (egpu_prog_verdict()) and cannot be attached, translated or run.
	 */
	bool strict;
};
#define egpu_load_opts__last_field strict

/** Load an eBPF ELF object from @p path. NULL on failure. */
EGPU_API egpu_obj *egpu_load(egpu_ctx *ctx, const char *path,
		    const struct egpu_load_opts *opts);
/** Load an eBPF ELF object from memory (copied). NULL on failure. */
EGPU_API egpu_obj *egpu_load_mem(egpu_ctx *ctx, const void *elf, size_t len,
			const struct egpu_load_opts *opts);
/**
 * Load a raw instruction stream (8 bytes per instruction, little-endian,
 * `lddw` taking two) as an object with one program named "prog" and no maps.
 */
EGPU_API egpu_obj *egpu_load_insns(egpu_ctx *ctx, const void *insns, size_t len,
			  const struct egpu_load_opts *opts);
/** Close an object, its programs and maps. NULL-safe. */
EGPU_API void egpu_obj_close(egpu_obj *obj);
/** Name of the object. */
EGPU_API const char *egpu_obj_name(const egpu_obj *obj);

/** Program by name, or NULL (EGPU_ENOENT in egpu_errmsg()). */
EGPU_API egpu_prog *egpu_obj_prog(const egpu_obj *obj, const char *name);
/** Iterate programs: pass NULL for the first, the previous for the next. */
EGPU_API egpu_prog *egpu_obj_next_prog(const egpu_obj *obj, const egpu_prog *prev);
/** Map by name, or NULL (EGPU_ENOENT in egpu_errmsg()). */
EGPU_API egpu_map *egpu_obj_map(const egpu_obj *obj, const char *name);
/** Iterate maps: pass NULL for the first, the previous for the next. */
EGPU_API egpu_map *egpu_obj_next_map(const egpu_obj *obj, const egpu_map *prev);

/** Where in a kernel a program runs. */
enum egpu_attach_point {
	EGPU_ATTACH_NONE = 0,  /**< not attachable: run directly only */
	EGPU_ATTACH_ENTRY = 1, /**< at kernel entry, every thread */
	EGPU_ATTACH_EXIT = 2,  /**< at every ret/exit, every thread */
	EGPU_ATTACH_MEM = 3,   /**< before every memory access */
	/** On the host, on the CPU back end: when the application calls a
	 *  CUDA API function (egpu attach, docs/attach.md); ctx is a
	 *  struct egpu_pt_regs of its arguments */
	EGPU_ATTACH_UPROBE = 4,
	EGPU_ATTACH_URETPROBE = 5, /**< the same, at its return: result in ax */
};

/** Name of an attach point: "none", "entry", "exit", "mem", "uprobe" or
 *  "uretprobe". */
EGPU_API const char *egpu_attach_point_str(enum egpu_attach_point at);

/** Program name (its function name in the ELF). */
EGPU_API const char *egpu_prog_name(const egpu_prog *prog);
/** ELF section the program came from ("" for raw programs). */
EGPU_API const char *egpu_prog_section(const egpu_prog *prog);
/** Attach point named by the section, or EGPU_ATTACH_NONE. */
EGPU_API enum egpu_attach_point egpu_prog_attach_point(const egpu_prog *prog);
/** Kernel name or glob from the section ("" if none); for uprobes the
 *  function named ("" for a plain SEC("uprobe")). */
EGPU_API const char *egpu_prog_kernel(const egpu_prog *prog);
/** Number of instructions after linking subprograms (lddw counts 2). */
EGPU_API size_t egpu_prog_insn_cnt(const egpu_prog *prog);
/** Linked instructions (8 bytes each), valid while the object lives. */
EGPU_API const void *egpu_prog_insns(const egpu_prog *prog);

/**
 * The verdict of the verifier on @p prog at load, for the attach point its
 * section names: 0 if accepted (or not checked yet: programs without an
 * attach point are verified when run), else the negative code, usually
 * EGPU_EVERIFY. @p msg (may be NULL) receives the reason, naming the
 * program and the instruction, or "" when accepted; valid while the object
 * lives.
 */
EGPU_API int egpu_prog_verdict(const egpu_prog *prog, const char **msg);

/** Options for egpu_prog_jit_ptx(). */
struct egpu_jit_opts {
	size_t sz;          /**< sizeof(struct egpu_jit_opts) */
	const char *sm;     /**< target; NULL: the context's */
	const char *func;   /**< PTX function name; NULL: "egpu_prog_<name>" */
	bool kernel;        /**< also emit a one-thread `.entry` wrapper */
	double jit_ms;      /**< out: time spent translating */
	/**
	 * Programs run directly (no attach point): bytes of memory r1 points
	 * to, as the verifier must assume; 0: none.
	 */
	size_t ctx_len;
};
#define egpu_jit_opts__last_field ctx_len

/**
 * Translate a program to PTX. The result holds a `.visible .func` named
 * @ref egpu_jit_opts.func taking (ctx pointer, ctx length) and returning r0
 * as .b64; with @ref egpu_jit_opts.kernel also an `.entry` of the same name
 * plus "_kernel" taking (ctx, ctx_len, u64 *r0). *ptx is malloc'ed,
 * NUL-terminated; free() it. Launches nothing; unless the context is
 * offline, the object's maps move to GPU memory first (their addresses
 * are in the PTX), binding the context to the current CUDA context.
 */
EGPU_API int egpu_prog_jit_ptx(egpu_prog *prog, struct egpu_jit_opts *opts,
		      char **ptx, size_t *len);

/** Options and results of egpu_prog_verify(). */
struct egpu_verify_opts {
	size_t sz;                /**< sizeof(struct egpu_verify_opts) */
	/** Attach point to verify for; EGPU_ATTACH_NONE with @ref ctx_len
	 *  for a direct run. Default: the program's own. */
	enum egpu_attach_point at;
	bool at_set;              /**< use @ref at (else the program's) */
	size_t ctx_len;           /**< direct runs: bytes of memory at r1 */
	int verbose;              /**< 1: state along the failing path; 2: every step */
	char *log;                /**< out: malloc'ed report and log; free() it */
	uint64_t insns_processed; /**< out: instructions the verifier walked */
	uint64_t states;          /**< out: states stored for pruning */
	double verify_ms;         /**< out: time taken */
};
#define egpu_verify_opts__last_field verify_ms

/**
 * Run the verifier on @p prog (programs are verified anyway before they are
 * translated; this call reports how). 0 if accepted, EGPU_EVERIFY with the
 * reason, naming the instruction, in egpu_errmsg() if not.
 */
EGPU_API int egpu_prog_verify(egpu_prog *prog, struct egpu_verify_opts *opts);

/** Where egpu_prog_run() executes a program. */
enum egpu_backend {
	EGPU_BACKEND_CPU = 0, /**< host code through LLVM ORC; needs no GPU */
	EGPU_BACKEND_GPU = 1, /**< one GPU thread; needs a GPU */
};

/** Options and results of egpu_prog_run(). */
struct egpu_run_opts {
	size_t sz;                 /**< sizeof(struct egpu_run_opts) */
	enum egpu_backend backend; /**< CPU (default) or GPU */
	void *ctx;                 /**< r1: memory the program may access */
	size_t ctx_len;            /**< r2: its length; copied back after a GPU run */
	uint64_t retval;           /**< out: r0 at exit */
	double run_ns;             /**< out: execution time, excluding translation */
	/**
	 * CPU back end: use the object's maps in GPU memory (moved there
	 * first, in the current CUDA context), as the GPU probes see them:
	 * the program's updates, deletes and writes through looked-up values
	 * reach the GPU copies when it returns (host probes of egpu attach).
	 */
	bool gpu_maps;
	/** Entry and exit probes (CPU only): the kernel parameter bytes the
	 *  probe's struct egpu_kernel_ctx points at (ctx->params,
	 *  bpf_egpu_read_param); ctx and ctx_len stay unset, the context is
	 *  made from these (also when both are unset: no parameters). At
	 *  least as many bytes as the probe reads directly through
	 *  ctx->params. */
	const void *params;
	size_t params_len;         /**< ctx->params_size: bytes at params */
};
#define egpu_run_opts__last_field params_len

/**
 * Run a program once with r1 = ctx and r2 = ctx_len (a probe's own ctx
 * struct too); an entry or exit probe given no ctx (CPU only) with r1 a
 * struct egpu_kernel_ctx whose params are egpu_run_opts.params.
 */
EGPU_API int egpu_prog_run(egpu_prog *prog, struct egpu_run_opts *opts);

/** Map types. Values match Linux's BPF_MAP_TYPE_* and bpftime's GPU types. */
enum egpu_map_type {
	EGPU_MAP_HASH = 1,
	EGPU_MAP_ARRAY = 2,
	EGPU_MAP_PERF_EVENT_ARRAY = 4,
	EGPU_MAP_PERCPU_ARRAY = 6,   /**< one value per GPU thread */
	EGPU_MAP_RINGBUF = 27,
	EGPU_MAP_PERTHREAD_ARRAY = 1502, /**< bpftime's per-thread array */
	EGPU_MAP_GPU_ARRAY = 1503,       /**< bpftime's GPU array */
	EGPU_MAP_GPU_RINGBUF = 1527,     /**< bpftime's GPU ring buffer */
	EGPU_MAP_GPU_HASH = 1501,        /**< bpftime's GPU hash: a HASH */
	EGPU_MAP_GPU_KERNEL_SHARED_ARRAY = 1504, /**< bpftime's: a GPU_ARRAY */
	EGPU_MAP_PERTHREAD_ARRAY_HOST = 1512, /**< 1502 in mapped host memory */
	EGPU_MAP_GPU_ARRAY_HOST = 1513,  /**< 1503 in mapped host memory */
	/** libegpu's: a value per key and GPU thread for one launch, shared
	 *  by the probes of one kernel, kept in registers; the host cannot
	 *  read it (docs/maps.md). */
	EGPU_MAP_THREAD_LOCAL = 4096,
	/** libegpu's: one copy of an array per SM; the host reads the sum
	 *  (egpu_map_lookup) or each SM's copy (egpu_map_lookup_values). */
	EGPU_MAP_SM_ARRAY = 4097,
};

/** Name of a map type ("hash", "array", "gpu_ringbuf", ...; "unknown"). */
EGPU_API const char *egpu_map_type_str(uint32_t type);
/** Map name ("name.data" style names for global data sections). */
EGPU_API const char *egpu_map_name(const egpu_map *map);
/** Map type (an ::egpu_map_type value). */
EGPU_API uint32_t egpu_map_type(const egpu_map *map);
/** Key size in bytes. */
EGPU_API uint32_t egpu_map_key_size(const egpu_map *map);
/** Value size in bytes. */
EGPU_API uint32_t egpu_map_value_size(const egpu_map *map);
/** Maximum number of entries. */
EGPU_API uint32_t egpu_map_max_entries(const egpu_map *map);

/** Flags of egpu_map_update(), as in Linux. */
enum egpu_update_flags {
	EGPU_ANY = 0,     /**< create or replace */
	EGPU_NOEXIST = 1, /**< create only */
	EGPU_EXIST = 2,   /**< replace only */
};

/** Copy the value stored under @p key into @p value. */
EGPU_API int egpu_map_lookup(egpu_map *map, const void *key, void *value);
/** Store @p value under @p key (see ::egpu_update_flags). */
EGPU_API int egpu_map_update(egpu_map *map, const void *key, const void *value,
		    uint64_t flags);
/** Remove @p key (array maps: EGPU_EINVAL, as in Linux). */
EGPU_API int egpu_map_delete(egpu_map *map, const void *key);
/**
 * Key following @p key in iteration order into @p next_key; @p key NULL
 * gives the first. EGPU_ENOENT after the last.
 */
EGPU_API int egpu_map_next_key(egpu_map *map, const void *key, void *next_key);

/**
 * Values per key of a map: the number of per-thread slots for
 * PERCPU_ARRAY/PERTHREAD_ARRAY maps and of SM copies for SM_ARRAY maps
 * living in GPU memory, else 1. egpu_map_lookup() fills value_size *
 * egpu_map_values_per_key() bytes, but value_size bytes (the sum over
 * SMs) for SM_ARRAY maps.
 */
EGPU_API uint32_t egpu_map_values_per_key(const egpu_map *map);
/**
 * Every value under @p key into @p value, value_size *
 * egpu_map_values_per_key() bytes: each thread slot's or each SM's value,
 * in slot order (one value for other maps).
 */
EGPU_API int egpu_map_lookup_values(egpu_map *map, const void *key,
				    void *value);
/**
 * Sum of every thread's value under @p key of a per-thread map (of any map:
 * then the value itself), word by word: 8-byte words when value_size is a
 * multiple of 8, else 4-byte words. @p sum receives value_size bytes.
 */
EGPU_API int egpu_map_lookup_sum(egpu_map *map, const void *key, void *sum);

/*
 * Typed values: the object's BTF (clang -g) names the fields of map keys,
 * values and ring records. Type ids are the BTF's; 0 is none.
 */

/**
 * Id of the struct, union, enum, typedef or integer type @p name ("struct
 * X" also) in @p obj's BTF; 0 (EGPU_ENOENT) when there is none.
 */
EGPU_API uint32_t egpu_obj_find_type(const egpu_obj *obj, const char *name);
/**
 * The type of @p size-byte records of ring map @p map (or of values of
 * any map): the value type the map's definition names (__type(value, T))
 * when it has @p size bytes, else the only struct of @p size bytes in the
 * BTF; 0 when neither (print the bytes as hex).
 */
EGPU_API uint32_t egpu_map_record_type(const egpu_map *map, size_t size);
/**
 * @p size bytes at @p data, a value of type @p type_id, as named fields on
 * one line: `{pid: 7, comm: "vec_add", at: [1, 2]}`, or as JSON (@p json).
 * *text is malloc'ed (free() it). EGPU_EINVAL when @p size is not the
 * type's.
 */
EGPU_API int egpu_obj_format(const egpu_obj *obj, uint32_t type_id,
			     const void *data, size_t size, bool json,
			     char **text, size_t *len);
/**
 * Store "MAP[KEY]=VALUE" into a map of @p obj. KEY and VALUE are typed by
 * the map's BTF key and value types: integers (decimal, 0x hex, negative
 * for signed types; range-checked), enumerator names, structs as
 * `{field: V, ...}` (fields not named keep the entry's value), arrays as
 * `[V, ...]`, char arrays as "text"; a map without BTF types takes
 * integers of its key and value sizes. EGPU_ENOENT for an unknown map,
 * EGPU_EINVAL naming the bad part.
 */
EGPU_API int egpu_obj_set(egpu_obj *obj, const char *assignment);
/**
 * Store every entry of JSON text @p json, an object of maps: `{"MAP":
 * {"KEY": VALUE, ...}}` (KEY a string holding a key as egpu_obj_set()
 * reads it) or `{"MAP": [{"key": K, "value": V}, ...]}`; values as
 * egpu_obj_set(). Stops at the first error.
 */
EGPU_API int egpu_obj_set_json(egpu_obj *obj, const char *json);

/** Opaque attachment of a program to the kernels matching a pattern. */
typedef struct egpu_link egpu_link;

/** Options for egpu_attach_kernel(). */
struct egpu_attach_opts {
	size_t sz; /**< sizeof(struct egpu_attach_opts) */
	/** EGPU_ATTACH_MEM: state spaces probed, a mask of
	 *  (1u << EGPU_SPACE_*) from <egpu/ctx.h>; 0: all. */
	uint32_t mem_spaces;
	/** EGPU_ATTACH_MEM: access kinds probed, a mask of
	 *  (1u << EGPU_MEM_*); 0: all. */
	uint32_t mem_kinds;
	/**
	 * Fail instrumentation (EGPU_ENOENT) of a module where @p kernel
	 * matches no kernel. Default: a warning in egpu_report.warnings and
	 * the log, so one probe set can serve many modules.
	 */
	bool strict;
};
#define egpu_attach_opts__last_field strict

/**
 * Attach @p prog at @p at to every kernel whose name matches @p kernel: the
 * mangled name, the demangled name with or without its parameter list, or
 * a glob (fnmatch) over either. Takes effect in the next
 * egpu_instrument_ptx() or egpu_module_load() of the program's context.
 */
EGPU_API egpu_link *egpu_attach_kernel(egpu_prog *prog, const char *kernel,
				       enum egpu_attach_point at,
				       const struct egpu_attach_opts *opts);
/**
 * Attach every program of @p obj whose section names an attach point
 * (gpu/entry/K, gpu/exit/K, kprobe/K, ...) and that the verifier accepted
 * (refused ones are skipped with a warning in the log; see
 * egpu_prog_verdict()). Returns the number attached. Host probes
 * (uprobe, uretprobe sections) are left to their caller: egpu attach runs
 * them with egpu_prog_run().
 */
EGPU_API int egpu_attach_all(egpu_obj *obj);
/** Remove an attachment. NULL-safe. */
EGPU_API void egpu_link_destroy(egpu_link *link);

/** What egpu_instrument_ptx() did to one kernel. */
struct egpu_kernel_report {
	const char *name;       /**< mangled name as in the PTX */
	const char *demangled;  /**< demangled name (= name for C kernels) */
	/** ctx->kernel_id seen by probes: unique among the kernels this
	 *  context instrumented, the same for the same kernel of the same
	 *  module text (egpu_kernel_info()) */
	uint32_t kernel_id;
	uint32_t entry_points;  /**< entry probes inserted */
	uint32_t exit_points;   /**< ret/exit sites patched */
	uint32_t programs;      /**< programs attached to this kernel */
	uint32_t inlined;       /**< probe bodies copied in (not called) */
	uint32_t mem_points;    /**< memory instructions probed, in the
				     kernel and the .funcs it calls */
};

/** One memory instruction probed by EGPU_ATTACH_MEM programs. */
struct egpu_mem_site {
	/** egpu_mem_ctx.site: numbered across the context's modules, so
	 *  the module's sites are site_base .. site_base + mem_site_cnt - 1,
	 *  the same again for the same module text */
	uint32_t site;
	uint32_t kernel_id;     /**< as egpu_mem_ctx.kernel_id */
	const char *function;   /**< .entry or .func holding it */
	const char *text;       /**< the instruction, as in the PTX */
	uint32_t ptx_line;      /**< its line in the input PTX (1-based) */
	uint32_t line;          /**< source line from .loc, 0 if none */
	const char *file;       /**< source file from .file, NULL if none */
	uint32_t size;          /**< bytes, 0 if only known at run time */
	uint16_t kind;          /**< EGPU_MEM_* */
	uint16_t space;         /**< EGPU_SPACE_* */
};

/** Summary of an instrumentation; arrays live until the next call. */
struct egpu_report {
	size_t sz;                  /**< sizeof(struct egpu_report) */
	uint32_t kernel_cnt;        /**< kernels in the module */
	uint32_t kernels_patched;   /**< kernels with at least one probe */
	uint32_t entry_points;      /**< entry probes inserted in all */
	uint32_t exit_points;       /**< exit sites patched in all */
	uint32_t programs;          /**< distinct programs linked in */
	double instrument_ms;       /**< time for JIT + rewrite + link */
	const struct egpu_kernel_report *kernels; /**< kernel_cnt entries */
	uint32_t mem_site_cnt;      /**< memory instructions probed */
	const struct egpu_mem_site *mem_sites; /**< mem_site_cnt entries */
	/** mem_sites[i].site is site_base + i: sites are numbered across
	 *  the context's modules */
	uint32_t site_base;
	uint32_t warning_cnt;       /**< attachments that matched no kernel or skipped one */
	/** warning_cnt lines: "prog 'P': no kernel matches 'K'; kernels: ...",
	 *  "prog 'P' reads ctx->params up to byte N; kernel 'K' has M bytes of
	 *  parameters: not attached to it" */
	const char *const *warnings;
	/** Memory probes called at sites instead of copied in, because
	 *  their copies would have passed egpu_ctx_opts.mem_inline_limit */
	uint32_t mem_called;
};

/**
 * Instrument a PTX module with every attachment of @p ctx. *out is a
 * malloc'ed, NUL-terminated PTX text (free() it). @p ptx may also be a
 * fatbin (nvcc -fatbin, the runtime's registered container; entries
 * compressed with LZ4 or zstd included): its newest PTX not newer than the
 * context's target is used. An image without such PTX (a cubin, SASS-only
 * fatbin) gets EGPU_ENOTSUP naming what it holds and how to embed PTX.
 * @p len 0: the length is taken from the image (PTX: up to its NUL); the
 * runtime's wrapper only so (it points at the fatbin). Maps referenced by the
 * programs are bound to their GPU memory, so this needs a GPU unless the
 * context was made with egpu_ctx_opts.offline.
 */
EGPU_API int egpu_instrument_ptx(egpu_ctx *ctx, const char *ptx, size_t len,
				 char **out, size_t *out_len,
				 struct egpu_report *report);

/** A kernel the context instrumented (egpu_kernel_info()). */
struct egpu_kernel_info {
	size_t sz;             /**< sizeof(struct egpu_kernel_info) */
	uint32_t kernel_id;    /**< its id, as egpu_kernel_ctx.kernel_id */
	const char *name;      /**< mangled name, as in the PTX */
	const char *demangled; /**< demangled name (= name for C kernels) */
	/** Its module: index among the distinct module texts the context
	 *  instrumented, in the order it first saw them */
	uint32_t module;
	uint64_t module_hash;  /**< FNV-1a hash of that module's PTX text */
	uint32_t index;        /**< position among the module's .entry */
};

/**
 * Number of kernels @p ctx has instrumented: their ids are 0 .. count-1.
 * Every .entry of every module given to egpu_instrument_ptx() or
 * egpu_module_load() gets an id, probed or not; the same kernel of the
 * same module text keeps its id. 0 for NULL.
 */
EGPU_API uint32_t egpu_kernel_cnt(const egpu_ctx *ctx);
/**
 * Describe kernel @p kernel_id of @p ctx into @p info (set its sz first);
 * the strings live as long as the context. EGPU_ENOENT for an id the
 * context never gave.
 */
EGPU_API int egpu_kernel_info(const egpu_ctx *ctx, uint32_t kernel_id,
			      struct egpu_kernel_info *info);
/**
 * For maps keyed by kernel id (4- or 8-byte keys): the sum, as
 * egpu_map_lookup_sum(), of the values under the ids of every kernel the
 * context instrumented that @p kernel names (as egpu_attach_kernel():
 * mangled, demangled, base name or glob). Frameworks compile one kernel
 * name many times (Triton's autotuning, specialisations): this reads them
 * as one. Ids without an entry add nothing. Returns how many ids had
 * one; EGPU_ENOENT when no kernel matches.
 */
EGPU_API int egpu_map_lookup_kernel(egpu_map *map, const char *kernel,
				    void *sum);

#ifndef EGPU_NO_CUDA_TYPES
/** The CUDA driver's module handle (identical to cuda.h's typedef). */
typedef struct CUmod_st *CUmodule;
#endif

/**
 * Instrument PTX or fatbin @p image (as egpu_instrument_ptx()) and load it into the
 * current CUDA context with cuModuleLoadDataEx. Maps are allocated in that
 * context's memory. A module the trace mode (egpu_mem_trace_enable())
 * made call the device runtime is linked with the runtime compiled apart
 * (egpu_ptx_link()); if that fails, a warning and the module as one.
 */
EGPU_API int egpu_module_load(egpu_ctx *ctx, CUmodule *mod, const void *image,
			      size_t len);

/** Options for egpu_ptx_link(). */
struct egpu_ptx_link_opts {
	size_t sz;              /**< sizeof(struct egpu_ptx_link_opts) */
	/** JIT options for the whole link (cuModuleLoadDataEx's: a
	 *  CUjit_option array and its values; the error log is the
	 *  library's, outputs are not written back) */
	unsigned int jit_cnt;
	const void *jit_keys;   /**< const CUjit_option[jit_cnt] */
	void *const *jit_vals;  /**< void *[jit_cnt] */
};
#define egpu_ptx_link_opts__last_field jit_vals

/**
 * The cubin of @p ptx, a module egpu_instrument_ptx() instrumented in
 * the splicer's trace mode, with the device runtime compiled apart
 * (egpu_mem_trace_opts.runtime_max_registers) and linked by the driver's
 * JIT linker in the current CUDA context: what egpu_module_load() loads.
 * *@p cubin is malloc'd (free() it), *@p size its bytes; load it with
 * cuModuleLoadData or cuLibraryLoadData. EGPU_ENOENT when there is
 * nothing to link apart (no traced site calls the runtime, or
 * runtime_max_registers < 0): load @p ptx as it is; other errors name the
 * stage that failed, and loading @p ptx as it is still works.
 */
EGPU_API int egpu_ptx_link(egpu_ctx *ctx, const char *ptx,
			   const struct egpu_ptx_link_opts *opts, void **cubin,
			   size_t *size);

/* ======================================================================
 * egpu memcheck: a memory-safety check at every access (docs/memcheck.md)
 */

/**
 * The buffers the check reads and writes, all device addresses in the
 * context's CUDA context, kept by the caller (the attach agent's, or an
 * egpu_memcheck's: lib/memcheck; layouts in lib/core/memcheck_layout.h).
 * Most callers want egpu_memcheck_new() and egpu_memcheck_attach().
 */
struct egpu_memcheck_opts {
	size_t sz;           /**< sizeof(struct egpu_memcheck_opts) */
	/** struct mc_cell, 16 bytes, zeroed at first: the address of the
	 *  published allocation index (0: none yet, and global accesses
	 *  pass), then the hints' tag */
	uint64_t index_cell;
	uint64_t states;     /**< the allocations' state words */
	uint64_t counts;     /**< struct mc_counts: bad accesses per site */
	uint64_t log;        /**< struct mc_log_rec[]: each site's first,
				  in device-mapped host memory */
	/** Skip a bad access: a load or atomic gives 0, a store is
	 *  dropped (egpu memcheck --contain) */
	bool contain;
	/** struct mc_hint[MC_HINTS], zeroed: the allocation each site's
	 *  lookup found last, tagged */
	uint64_t hints;
};
#define egpu_memcheck_opts__last_field hints

/**
 * Check every global, shared, local and generic access of every kernel
 * that egpu_instrument_ptx() or egpu_module_load() instruments from now
 * on, after the probes attached there (if any). Returns 0, or EGPU_EINVAL
 * for a missing buffer; a second call replaces the first's buffers for
 * later modules.
 */
EGPU_API int egpu_memcheck_enable(egpu_ctx *ctx,
				  const struct egpu_memcheck_opts *opts);

/*
 * The checker in-process (docs/memcheck.md, "In-process"): a framework
 * that instruments its own kernels (egpu_instrument_ptx(),
 * egpu_module_load(): Triton, JAX) checks them against the allocations it
 * tells the checker of, and reads the reports itself. The checker owns
 * the check's buffers in the CUDA context current when it is made.
 */

/** Opaque in-process checker: allocation table, buffers and reports. */
typedef struct egpu_memcheck egpu_memcheck;

/** Options for egpu_memcheck_new(). */
struct egpu_memcheck_new_opts {
	size_t sz; /**< sizeof(struct egpu_memcheck_new_opts) */
	/** Skip a bad access: a load or atomic gives 0, a store is
	 *  dropped, so the program runs on */
	bool contain;
	/** Sites egpu_memcheck_text() prints, the rest counted; 0: 20 */
	uint32_t max_reports;
	/** Allocations tracked at once; 0: 65,536 */
	uint32_t max_allocs;
};
#define egpu_memcheck_new_opts__last_field max_allocs

/** What an allocation is, for the report's words ("a 4,096-byte
 *  cudaMalloc allocation"). */
enum egpu_memcheck_kind {
	EGPU_MEMCHECK_ALLOC,      /**< cudaMalloc, cuMemAlloc */
	EGPU_MEMCHECK_PITCH,      /**< cudaMallocPitch */
	EGPU_MEMCHECK_MANAGED,    /**< cudaMallocManaged */
	EGPU_MEMCHECK_HOST,       /**< cudaHostAlloc, mapped */
	EGPU_MEMCHECK_REGISTERED, /**< cudaHostRegister, mapped */
	EGPU_MEMCHECK_ASYNC,      /**< cudaMallocAsync */
	EGPU_MEMCHECK_POOL,       /**< cudaMallocFromPoolAsync */
	EGPU_MEMCHECK_VMM,        /**< cuMemMap'd virtual memory */
	EGPU_MEMCHECK_GLOBAL,     /**< a module's __device__ variable */
	EGPU_MEMCHECK_KIND_COUNT
};

/** One site's bad accesses, egpu_memcheck_report_at(). */
struct egpu_memcheck_report {
	size_t sz;          /**< sizeof(struct egpu_memcheck_report) */
	/** The kernel, demangled ("site N" when unnamed); valid until
	 *  egpu_memcheck_free() */
	const char *kernel;
	/** Source file from .loc; NULL: line is the PTX's */
	const char *file;
	uint32_t line;
	uint32_t site;      /**< egpu_mem_site.site */
	uint16_t kind;      /**< EGPU_MEM_* */
	uint16_t space;     /**< EGPU_SPACE_* */
	uint32_t size;      /**< bytes accessed */
	/** The first bad access's address; shared and local: its offset
	 *  in the block's shared memory or the thread's frame */
	uint64_t addr;
	uint32_t block[3];
	uint32_t thread[3];
	/** Where it lay: "4 bytes past the end of a 4,096-byte cudaMalloc
	 *  allocation"; valid until egpu_memcheck_free() */
	const char *where;
	uint64_t count;     /**< bad accesses at this site */
};

/**
 * A checker in the current CUDA context (made current as
 * egpu_module_load() does when none is). NULL on failure
 * (egpu_errmsg(): no GPU, out of memory, bad options).
 */
EGPU_API egpu_memcheck *
egpu_memcheck_new(const struct egpu_memcheck_new_opts *opts);
/**
 * Free the checker: waits for the context's work first. Kernels
 * instrumented against it must not run afterwards; the context it was
 * attached to instruments without the check from then on.
 */
EGPU_API void egpu_memcheck_free(egpu_memcheck *mc);
/**
 * Check every access of what @p ctx instruments from now on (as
 * egpu_memcheck_enable(), with the checker's buffers), and name the
 * sites of those instrumentations in its reports. One context per
 * checker for its life (EGPU_EBUSY for another, even once the first is
 * freed: site numbers are a context's); both in the same CUDA context
 * (EGPU_EINVAL).
 */
EGPU_API int egpu_memcheck_attach(egpu_ctx *ctx, egpu_memcheck *mc);
/**
 * [@p base, @p base + @p size) is live from now on, for kernels launched
 * after the call. EGPU_MEMCHECK_VMM ranges merge with the mapped ranges
 * they touch (an access may span two maps). EGPU_EINVAL for an empty or
 * wrapping range or a bad kind, EGPU_ENOMEM past max_allocs.
 */
EGPU_API int egpu_memcheck_track(egpu_memcheck *mc, uint64_t base,
				 uint64_t size, enum egpu_memcheck_kind kind);
/**
 * The allocation tracked at @p base is dead from now on (a later access
 * is a use after free). EGPU_ENOENT: none is tracked there.
 */
EGPU_API int egpu_memcheck_untrack(egpu_memcheck *mc, uint64_t base);
/** Whatever EGPU_MEMCHECK_VMM range lies in [@p base, @p base + @p size)
 *  is dead from now on (cuMemUnmap); the parts outside stay. */
EGPU_API int egpu_memcheck_untrack_range(egpu_memcheck *mc, uint64_t base,
					 uint64_t size);
/**
 * Stream-ordered: live (dead) when @p stream (a CUstream) reaches this
 * point, as cudaMallocAsync (cudaFreeAsync) on it.
 */
EGPU_API int egpu_memcheck_track_async(egpu_memcheck *mc, uint64_t base,
				       uint64_t size,
				       enum egpu_memcheck_kind kind,
				       void *stream);
EGPU_API int egpu_memcheck_untrack_async(egpu_memcheck *mc, uint64_t base,
					 void *stream);
/**
 * The module-scope variables (`.global`, `.const`) that @p ptx, a
 * module's PTX as instrumented, defines, at their addresses in the loaded
 * module holding @p function (a CUfunction: a framework loading its own
 * binaries knows its kernels, e.g. Triton's launch metadata), live until
 * the checker is freed; each variable once however often asked.
 */
EGPU_API int egpu_memcheck_track_globals(egpu_memcheck *mc, uint64_t function,
					 const char *ptx, size_t len);
/**
 * Take what the GPU reported so far (kernels still running may add
 * more: synchronise first for all). Returns the number of sites with
 * bad accesses (0: none), or a negative EGPU_* error.
 */
EGPU_API int egpu_memcheck_poll(egpu_memcheck *mc);
/**
 * The @p i -th site with bad accesses (below egpu_memcheck_poll()'s
 * count), in the order they first went wrong. Set out->sz first.
 * EGPU_ENOENT past the last.
 */
EGPU_API int egpu_memcheck_report_at(egpu_memcheck *mc, uint32_t i,
				     struct egpu_memcheck_report *out);
/** Bad accesses counted so far (as of the last poll). */
EGPU_API uint64_t egpu_memcheck_errors(const egpu_memcheck *mc);
/**
 * The report as `egpu memcheck` prints it (@p json: one JSON object),
 * malloc'd into *@p text (free() it): at most max_reports sites, the last
 * line the error count.
 */
EGPU_API int egpu_memcheck_text(egpu_memcheck *mc, bool json, char **text,
				size_t *len);

/* ======================================================================
 * The splicer's trace mode: every memory access a compact record in a
 * ring's spans, the common case written at the access itself, no probe
 * program (docs/events.md, "The splicer's trace mode")
 */

/** Which accesses egpu_mem_trace_enable() records. */
struct egpu_mem_trace_opts {
	size_t sz;            /**< sizeof(struct egpu_mem_trace_opts) */
	/** Kernels, as egpu_attach_kernel() names them; NULL: "*" */
	const char *kernel;
	/** (1u << EGPU_SPACE_*) of the accesses recorded; 0: global only */
	uint32_t mem_spaces;
	/** (1u << EGPU_MEM_*) of the accesses recorded; 0: all */
	uint32_t mem_kinds;
	/** At most this many registers per thread in each traced kernel
	 *  that sets no limit of its own (PTX .maxnreg); the rest is
	 *  spilled. 0: the most that keep the kernel's occupancy untraced
	 *  (its blocks per SM at its .maxntid or .reqntid, else its count
	 *  rounded up to 8), the untraced count from the driver compiling
	 *  the module as it came (once per instrumented module; no cap
	 *  offline or with runtime_max_registers < 0; docs/events.md,
	 *  "Registers: the plain kernel's occupancy"). A cap is a .maxnreg
	 *  in the instrumented text and wins over a JIT option's register
	 *  limit: egpu_ptx_link() lowers caps to its CU_JIT_MAX_REGISTERS;
	 *  a text loaded otherwise keeps them.
	 *  EGPU_MAX_REGISTERS_ANY: as ptxas sees fit */
	uint32_t max_registers;
	/** egpu_module_load() (and egpu_ptx_link()) compile the device
	 *  runtime apart from a traced module's kernels, at most this many
	 *  registers a thread, and link the two, so that the runtime's rare
	 *  calls no longer set the kernels' register count (docs/events.md,
	 *  "The runtime compiled apart"). 0: 32; negative: one module,
	 *  compiled as one program */
	int32_t runtime_max_registers;
};
#define egpu_mem_trace_opts__last_field runtime_max_registers
/** egpu_mem_trace_opts.max_registers: no cap, ptxas decides. */
#define EGPU_MAX_REGISTERS_ANY 0xffffffffu /* UINT32_MAX */

/**
 * Record the accesses @opts selects of every kernel that
 * egpu_instrument_ptx() or egpu_module_load() instruments from now on
 * in @ring, a ring map of an object loaded in @ctx, which must stay open
 * meanwhile: the records bpf_egpu_trace_span makes (one span per warp
 * and ring record, egpu_span_begin()/egpu_span_next() decode them; a
 * lossless ring, EGPU_F_RING_LOSSLESS, publishes a span per access), each
 * thread's open span published at the kernel's exits. Returns 0, or
 * EGPU_EINVAL (not a ring map, another context's, bad options); a second
 * call replaces the first for later modules.
 */
EGPU_API int egpu_mem_trace_enable(egpu_ctx *ctx, egpu_map *ring,
				   const struct egpu_mem_trace_opts *opts);

/* ======================================================================
 * Compilers with a ptxas of their own (XLA; docs/frameworks.md, JAX)
 *
 * XLA turns its PTX into a cubin with ptxas before the driver sees it. A
 * stand-in `ptxas` (egpu_ptxas_standin_dir()) put first on PATH hands that
 * PTX to a server in the process that owns the maps, which instruments it
 * with its context, and runs the real ptxas on the result.
 * ====================================================================== */

/** Opaque server instrumenting the PTX a stand-in ptxas sends. */
typedef struct egpu_ptxas_server egpu_ptxas_server;

/** Options for egpu_ptxas_server_start(). */
struct egpu_ptxas_server_opts {
	size_t sz; /**< sizeof(struct egpu_ptxas_server_opts) */
	/** Socket path; NULL: a new one in a private directory under $TMPDIR. */
	const char *socket_path;
	/**
	 * Instrument with this instead of egpu_instrument_ptx() on the
	 * context given (which may then be NULL): for a caller that binds its
	 * context lazily or guards it with a lock of its own. @p arch is the
	 * compile's ("sm_90a"). Return 0 with *@p out malloc'ed, 0 with
	 * *@p out NULL to decline (the original is compiled), or a negative
	 * EGPU_E* code with egpu_errmsg() set.
	 */
	int (*instrument)(void *user, const char *arch, const char *ptx,
			  size_t len, char **out, size_t *out_len);
	void *user; /**< passed to @ref instrument */
};
#define egpu_ptxas_server_opts__last_field user

/**
 * Serve stand-in ptxas runs on a thread of its own, one at a time,
 * instrumenting their PTX with @p ctx when the compile targets the
 * context's GPU, and declining otherwise (the stand-in then compiles the
 * original). Only compiles this process runs are served: a stand-in whose
 * parent is another process (a forked child's) is declined. NULL on
 * failure (egpu_errmsg()).
 */
EGPU_API egpu_ptxas_server *
egpu_ptxas_server_start(egpu_ctx *ctx, const struct egpu_ptxas_server_opts *opts);
/** The socket stand-ins connect to: the value for EGPU_PTXAS_SOCKET. */
EGPU_API const char *egpu_ptxas_server_socket(const egpu_ptxas_server *srv);

/** What a server did (egpu_ptxas_server_stats()). */
struct egpu_ptxas_stats {
	size_t sz;             /**< sizeof(struct egpu_ptxas_stats) */
	uint64_t requests;     /**< stand-in runs that reached the server */
	uint64_t instrumented; /**< modules handed back instrumented */
	uint64_t declined;     /**< for another GPU, or nothing attached matched */
	uint64_t failed;       /**< instrumentation failed: compiled plain */
	double instrument_ms;  /**< libegpu's time over all of them */
};
/** Copy the server's counts into @p st (set its sz first). */
EGPU_API int egpu_ptxas_server_stats(const egpu_ptxas_server *srv,
				     struct egpu_ptxas_stats *st);
/** Stop serving and remove the socket. NULL-safe. */
EGPU_API void egpu_ptxas_server_stop(egpu_ptxas_server *srv);
/**
 * The directory holding the stand-in `ptxas` installed with this library
 * (put it first on PATH, and the real ptxas in EGPU_PTXAS_REAL), or NULL
 * where it is missing.
 */
EGPU_API const char *egpu_ptxas_standin_dir(void);

/* ======================================================================
 * Events: ring buffers and printing (docs/events.md)
 *
 * Ring maps (RINGBUF, PERF_EVENT_ARRAY, GPU_RINGBUF) keep their records in
 * host memory that the GPU writes directly (page-locked and mapped into
 * the GPU when the map's object first uses it; the CPU back end writes the
 * same memory before that). Programs write with bpf_ringbuf_output /
 * reserve / submit / discard and bpf_perf_event_output; a full ring drops
 * the record and counts the drop, nothing on the GPU ever waits for the
 * host. The host reads records where they lie: consuming makes no CUDA
 * call, so it is safe while kernels run and never waits for them.
 * ====================================================================== */

/**
 * Receives one record: @p size bytes at @p data, valid during the call
 * only. Return 0 (or more) to go on, a negative value to stop: the
 * egpu_ringbuf_poll() or egpu_ringbuf_consume() call then returns it.
 */
typedef int (*egpu_sample_fn)(void *user, const void *data, size_t size);

/** Opaque consumer of one or more ring maps. */
typedef struct egpu_ringbuf egpu_ringbuf;

/**
 * A consumer of ring map @p map calling @p fn for each record. No GPU is
 * needed: a ring made before its object's first GPU use sees the records
 * of the GPU after it, as its memory does not move. One consumer per map
 * (EGPU_EINVAL for a second). NULL on failure.
 */
EGPU_API egpu_ringbuf *egpu_ringbuf_new(egpu_map *map, egpu_sample_fn fn,
					void *user);
/** One record of a batch (egpu_batch_fn): valid during the call only. */
struct egpu_record {
	const void *data; /**< payload, 8-aligned */
	size_t size;      /**< payload bytes */
};

/**
 * Records delivered many at a time, in ring order. Returning < 0 stops
 * consumption (poll/consume return it); the records were consumed.
 */
typedef int (*egpu_batch_fn)(void *user, const struct egpu_record *recs,
			     size_t n);

/**
 * Records handed over whole (egpu_ringbuf_opts.chunk_fn): @p size bytes
 * at @p data, 8-aligned, valid during the call only, hold whole records
 * in the ring's own format, in ring order: each an ::egpu_rec_hdr and its
 * payload padded to 8 bytes. They are the bytes the ring holds (in place
 * for a ring in host memory, the page-locked copy of a ring in GPU
 * memory): a span ring's chunk is its spans back to back. Walk them with
 * egpu_chunk_next(), or with a dtype over the bytes (Python:
 * egpu.decode_spans()).
 * Returning < 0 stops consumption after this chunk (its records were
 * consumed); poll/consume return that value.
 */
typedef int (*egpu_chunk_fn)(void *user, const void *data, size_t size);

/** A record's header in a chunk or a record file: 8 bytes, little-endian. */
struct egpu_rec_hdr {
	uint32_t len;   /**< payload bytes */
	uint32_t flags; /**< EGPU_REC_* */
};
#define EGPU_REC_COMMIT 1u  /**< published (a reclaimed span lacks it) */
#define EGPU_REC_DISCARD 2u /**< padding: skip it (egpu_chunk_next() does) */
/**
 * A warp's batch of records of one size: the payload is u32 count, u32
 * len, then word k of record i at u64 index k * count + i.
 */
#define EGPU_REC_BATCH 4u
#define EGPU_REC_SPAN 16u   /**< a span (egpu_span_begin()) */
/* Other bits (32: counted by its producer, docs/events.md) may be set. */

/** A cursor over the records of a chunk: {data, data + size}. */
struct egpu_chunk_iter {
	const uint8_t *at, *end;
};
/** One record of a chunk (egpu_chunk_next()). */
struct egpu_chunk_rec {
	const void *data; /**< payload, 8-aligned, in the chunk */
	uint32_t size;    /**< payload bytes */
	uint32_t flags;   /**< EGPU_REC_*: BATCH records are not unpacked */
};
/**
 * The chunk's next record, discards skipped: 1, 0 at the end, or
 * EGPU_EFORMAT for a header that runs past the chunk.
 */
EGPU_API int egpu_chunk_next(struct egpu_chunk_iter *it,
			     struct egpu_chunk_rec *rec);

/**
 * How egpu_ringbuf_add_opts() delivers a map's records: @p batch_fn,
 * @p chunk_fn and/or @p path (not both callbacks); with none, the sample
 * callback as usual. For @p batch_fn records are gathered into a buffer
 * of @p batch_bytes, handed over when it is full and at the end of every
 * poll/consume, so each call sees whole records only; @p chunk_fn gets
 * the records as the ring holds them, without gathering; a file is
 * written in @p batch_bytes pieces. Drops stay counted by
 * egpu_ringbuf_drops().
 */
struct egpu_ringbuf_opts {
	size_t sz;              /**< sizeof(struct egpu_ringbuf_opts) */
	egpu_batch_fn batch_fn; /**< records in batches (user: the add's) */
	/**
	 * Stream records to this file (created or truncated, closed by
	 * egpu_ringbuf_free()) as they arrive: a struct
	 * egpu_record_file_header, then the records in the ring's own
	 * format, each an ::egpu_rec_hdr and the payload padded to 8 bytes,
	 * written as the ring holds them (whole chunks, see @p chunk_fn;
	 * with @p batch_fn, as gathered: flags 0). egpu_record_file_read()
	 * reads it back. A failed write is EGPU_EIO.
	 */
	const char *path;
	size_t batch_bytes;     /**< gather buffer; 0: 1 MiB */
	/**
	 * Consumer threads (0 or 1: the thread calling poll/consume alone;
	 * at most 64). With @p threads = N, each poll/consume drains a ring
	 * in GPU memory (EGPU_F_RING_DEVICE) on N threads at once, the
	 * caller and N - 1 the egpu_ringbuf starts (egpu_ringbuf_free() ends
	 * them): thread k takes shards k, k + N, ... So @p fn / @p batch_fn
	 * are called concurrently from N threads, but the records of one
	 * shard (one SM's) always on the same thread, in order, never two at
	 * once; each thread has its own batch buffer of @p batch_bytes, and
	 * writes its batches to @p path whole, under a lock. A call returns
	 * when every thread finished. A host ring is one shard: one thread.
	 */
	uint32_t threads;
	/**
	 * Records handed over whole, many at a time, in the ring's own
	 * format (::egpu_chunk_fn): no call, copy or decoding per record.
	 * Excludes @p batch_fn; with @p path, the file gets each chunk
	 * raw before @p chunk_fn does.
	 */
	egpu_chunk_fn chunk_fn;
};
#define egpu_ringbuf_opts__last_field chunk_fn

/**
 * egpu_ringbuf_add() with batch or file delivery (@p opts may be NULL:
 * then as egpu_ringbuf_add(); @p fn may be NULL when @p opts delivers).
 */
EGPU_API int egpu_ringbuf_add_opts(egpu_ringbuf *rb, egpu_map *map,
				   egpu_sample_fn fn, void *user,
				   const struct egpu_ringbuf_opts *opts);
/** egpu_ringbuf_new() with egpu_ringbuf_add_opts()'s @p opts. */
EGPU_API egpu_ringbuf *egpu_ringbuf_new_opts(egpu_map *map, egpu_sample_fn fn,
					     void *user,
					     const struct egpu_ringbuf_opts *opts);
/** Add ring map @p map, with its own callback, to @p rb. */
EGPU_API int egpu_ringbuf_add(egpu_ringbuf *rb, egpu_map *map,
			      egpu_sample_fn fn, void *user);
/**
 * Hand every complete record of every ring of @p rb to its callback, in
 * each ring's order, without waiting. Also delivers waiting print lines of
 * the rings' contexts (see egpu_print_poll()), not counted. Returns the
 * records handled, or a negative callback result or EGPU_E* code.
 */
EGPU_API int egpu_ringbuf_consume(egpu_ringbuf *rb);
/**
 * egpu_ringbuf_consume(), first waiting up to @p timeout_ms (< 0: without
 * limit, 0: not at all) for a record when none is there. The GPU cannot
 * wake the host: waiting looks at the rings every 10 us at first, then
 * less often, at least once a millisecond.
 */
EGPU_API int egpu_ringbuf_poll(egpu_ringbuf *rb, int timeout_ms);
/** Records dropped, over all rings of @p rb, because a ring was full. */
EGPU_API uint64_t egpu_ringbuf_drops(const egpu_ringbuf *rb);
/**
 * The longest a GPU producer of lossless ring map @p map
 * (EGPU_F_RING_LOSSLESS) waits for the host to drain it before dropping
 * (default 1000 ms; 0: 1 ns, drop at once). Only before the map's first
 * GPU use (EGPU_EBUSY after); EGPU_EINVAL for a map not lossless.
 */
EGPU_API int egpu_map_set_ring_wait(egpu_map *map, uint32_t wait_ms);

/**
 * egpu_ringbuf_consume() that also takes the spans (bpf_egpu_trace_span)
 * left open by threads that ended without their flush (a trap, a probe
 * without its exit probe), which otherwise hold back their shard's later
 * records. Call it only when no kernel that writes @p rb's rings runs
 * (after a synchronize): an open span is taken as far as its records go.
 */
EGPU_API int egpu_ringbuf_reclaim(egpu_ringbuf *rb);

/* ======================================================================
 * Spans of memory access records (bpf_egpu_trace_span; docs/events.md,
 * "Spans"): each ring record is one warp's span; these decode one.
 * ====================================================================== */

/** Who made a span: all its records are one warp's accesses. */
struct egpu_span_info {
	uint32_t block; /**< linear block index */
	uint32_t warp;  /**< warp of the block (linear thread index / 32) */
	uint32_t smid;
};

/** One warp access, decoded: every active lane's address. */
struct egpu_warp_rec {
	uint32_t mask;     /**< lanes that accessed together */
	uint32_t site;     /**< egpu_mem_ctx.site */
	uint32_t size;     /**< bytes per lane */
	uint16_t kind;     /**< EGPU_MEM_* */
	uint16_t affine;   /**< 1: addr[i] = addr[lowest] + (i - lowest) * stride */
	int64_t stride;    /**< affine only */
	uint64_t addr[32]; /**< addr[lane] for each lane of @p mask, else 0 */
	uint32_t bytes;    /**< bytes the record took in the span */
};

/** A cursor over a span's records (egpu_span_begin()). */
struct egpu_span_iter {
	const uint8_t *at, *end;
};

/**
 * Start decoding the span record @p data of @p size bytes (as a ring
 * callback gets it); @p info (may be NULL) receives its owner. 0 or
 * EGPU_EFORMAT (not a span record's size).
 */
EGPU_API int egpu_span_begin(struct egpu_span_iter *it, const void *data,
			     size_t size, struct egpu_span_info *info);
/**
 * The span's next record into @p rec: 1, 0 at the end, EGPU_EFORMAT when
 * a record is malformed or runs past the span (egpu_errmsg() says where).
 */
EGPU_API int egpu_span_next(struct egpu_span_iter *it, struct egpu_warp_rec *rec);

/**
 * Count the records of the span record @p data of @p size bytes and, in
 * *@p lanes (may be NULL), their active lanes, without decoding their
 * addresses: for a consumer that keeps spans whole. Returns the records,
 * or EGPU_EFORMAT (not a span, a record running past its end).
 */
EGPU_API int egpu_span_count(const void *data, size_t size, uint64_t *lanes);

/**
 * A record file (egpu_ringbuf_opts.path) starts with this header, then
 * the records in the ring's own format: each an ::egpu_rec_hdr and the
 * payload padded to 8 bytes; EGPU_REC_DISCARD records are padding,
 * EGPU_REC_BATCH ones a warp's batch (version 1: flags always 0). A span
 * ring's file holds its spans raw, one per record (version 3: their
 * records may be 8-byte short ones, which a reader of version 2 would
 * misread).
 */
struct egpu_record_file_header {
	char magic[8];     /**< EGPU_RECORD_FILE_MAGIC, not NUL-terminated */
	uint32_t version;  /**< EGPU_RECORD_FILE_VERSION (1 and 2 are read too) */
	uint32_t hdr_size; /**< bytes of this header: records start there */
};
#define EGPU_RECORD_FILE_MAGIC "EGPU-REC"
#define EGPU_RECORD_FILE_VERSION 3u

/**
 * Hand every record of record file @p path to @p fn (as a ring callback:
 * the payload, valid during the call; a span ring's are spans for
 * egpu_span_begin(); a batch's records one by one, discards skipped), in
 * file order, the file mapped, not copied.
 * Returns the records handed over, fn's result when < 0 (it stops), or
 * EGPU_EIO / EGPU_EFORMAT (not a record file, a record cut short) naming
 * the file and the offset.
 */
EGPU_API long egpu_record_file_read(const char *path, egpu_sample_fn fn,
				    void *user);

/** Counters of an ::egpu_ringbuf (egpu_ringbuf_stats()). */
struct egpu_ringbuf_stats {
	size_t sz;        /**< sizeof(struct egpu_ringbuf_stats) */
	uint64_t records; /**< records handed to callbacks */
	uint64_t bytes;   /**< their payload bytes */
	uint64_t drops;   /**< records producers dropped: the ring was full */
	uint32_t rings;   /**< rings consumed */
	/**
	 * Bytes of records copied out of GPU memory (EGPU_F_RING_DEVICE):
	 * each record once, or twice where it may have been published
	 * while copied (docs/events.md, "Copied once"); 0 for rings in host
	 * memory, read where they lie.
	 */
	uint64_t copied;
};

/** Fill @p stats (set its sz first). */
EGPU_API int egpu_ringbuf_stats(const egpu_ringbuf *rb,
				struct egpu_ringbuf_stats *stats);
/**
 * A file descriptor for an event loop (epoll, poll): a timerfd that turns
 * readable every millisecond, NOT when a record arrives (a GPU cannot
 * signal one). Call egpu_ringbuf_consume() when it is readable; that also
 * resets it. Owned by @p rb.
 */
EGPU_API int egpu_ringbuf_fd(egpu_ringbuf *rb);
/** Free the consumer (not the maps). Free it before closing their object. NULL-safe. */
EGPU_API void egpu_ringbuf_free(egpu_ringbuf *rb);

/** Where a print line came from (egpu_print_fn). */
struct egpu_print_info {
	size_t sz;          /**< sizeof(struct egpu_print_info) */
	const char *obj;    /**< object holding the format, NULL if unknown */
	uint32_t block[3];  /**< blockIdx of the printing thread */
	uint32_t thread[3]; /**< threadIdx */
	/** The printing kernel's id (egpu_kernel_info()), or
	 *  EGPU_PRINT_NO_KERNEL: direct runs, bpf-to-bpf subprograms, memory
	 *  probes in a .func several kernels call */
	uint32_t kernel_id;
};
#define EGPU_PRINT_NO_KERNEL 0xffffffffu

/**
 * Receives one line printed on the GPU by bpf_printk / bpf_trace_printk /
 * bpf_trace_vprintk / bpf_puts, formatted, without a trailing newline.
 */
typedef void (*egpu_print_fn)(void *user, const char *line,
			      const struct egpu_print_info *info);

/**
 * Send GPU print lines of @p ctx to @p fn. Without one (or with NULL) they
 * go to the context's log callback at EGPU_LOG_INFO, whatever its
 * log_level, as "OBJ block (x,y,z) thread (x,y,z): LINE", or without one
 * to stderr. Do not call egpu_print_* from @p fn. (The CPU back end prints
 * to stderr directly.)
 */
EGPU_API int egpu_print_set_callback(egpu_ctx *ctx, egpu_print_fn fn,
				     void *user);
/**
 * Deliver the lines GPU threads printed since the last call, waiting up to
 * @p timeout_ms (as egpu_ringbuf_poll()) when there are none yet. Lines
 * are asynchronous: a kernel's prints arrive when the host polls (or at
 * egpu_ctx_free()), in the order threads reserved room for them. Returns
 * the lines delivered, 0 at once if no probe of @p ctx prints.
 */
EGPU_API int egpu_print_poll(egpu_ctx *ctx, int timeout_ms);
/** Lines dropped because the print ring was full. */
EGPU_API uint64_t egpu_print_drops(const egpu_ctx *ctx);

/* ======================================================================
 * User helpers: an application's own functions called from probes
 * (docs/helpers.md)
 *
 * egpu_helper_register() gives a host function a helper number from the
 * user range below; programs call it like any helper:
 *     static long (*on_nan)(__u64 kernel, __u64 index) = (void *)0x10000;
 * The signature string describes its arguments so the verifier can check
 * every call: "RET (ARG, ...)" with RET "u64" or "void" and up to five
 * ARGs, each "u64" (a scalar), "u8[N]" (a pointer to N bytes of the
 * probe's stack or of a map value that the function may write) or
 * "const u8[N]" (N bytes it only reads), 1 <= N <= EGPU_HELPER_BUF_MAX;
 * e.g. "void (u64, u64)" or "u64 (const u8[16], u64)". Objects are
 * verified against the helpers their context had when they were loaded.
 *
 * On the CPU back end a call is an ordinary synchronous call. From the
 * GPU it is asynchronous and never waits: the probe writes the helper's
 * number, its scalar arguments and copies of its buffer arguments as one
 * record into the context's call ring, and the call returns 0 (queued) or
 * a negative errno (-EAGAIN: ring full, the call is dropped and counted).
 * The host later calls the function (through libffi) with those values,
 * buffers pointing to the copies (writes to them reach no probe), in the
 * order each GPU thread made its calls: on a dispatcher thread of the
 * context (the default) or in egpu_helper_poll().
 * ====================================================================== */

/** The helper numbers left to applications: clear of Linux's (below
 *  1000 for years to come), bpftime's (500s, map types in 1500s) and
 *  libegpu's (501-1023). */
#define EGPU_HELPER_USER_MIN 0x10000
#define EGPU_HELPER_USER_MAX 0x1ffff
/** Largest buffer argument, in bytes (the GPU copies it into the ring). */
#define EGPU_HELPER_BUF_MAX 256

/**
 * A generic helper body, for callers that cannot make a C function of
 * each signature (language bindings): @p args holds the @p nargs
 * arguments as 64-bit values, buffers as their addresses. Returns the
 * helper's result (ignored for "void" helpers).
 */
typedef uint64_t (*egpu_helper_generic_fn)(void *user, uint32_t id,
					   const uint64_t *args,
					   uint32_t nargs);

/** Options of egpu_helper_register(). */
struct egpu_helper_opts {
	size_t sz; /**< sizeof(struct egpu_helper_opts) */
	/** With a NULL fn: the helper is a C function of the signature built
	 *  by libffi (a closure) that calls generic(user, id, args, nargs). */
	egpu_helper_generic_fn generic;
	void *user; /**< first argument of generic */
};
#define egpu_helper_opts__last_field user

/**
 * Make @p fn, of @p signature, helper number @p id (in
 * [EGPU_HELPER_USER_MIN, EGPU_HELPER_USER_MAX], not yet registered in @p
 * ctx) of @p ctx, called @p name in listings and messages. Objects loaded
 * from then on may call it. EGPU_EINVAL with a message naming what is
 * wrong; a registration lasts as long as the context.
 */
EGPU_API int egpu_helper_register(egpu_ctx *ctx, uint32_t id, const char *name,
				  void *fn, const char *signature,
				  const struct egpu_helper_opts *opts);

/** What an argument of a helper signature is (egpu_helper_sig.kind). */
enum egpu_helper_arg {
	EGPU_HELPER_ARG_U64 = 1,       /**< "u64": a scalar */
	EGPU_HELPER_ARG_BUF = 2,       /**< "u8[N]": N bytes it may write */
	EGPU_HELPER_ARG_CONST_BUF = 3, /**< "const u8[N]": N bytes it reads */
};

/** A helper signature string, parsed (egpu_helper_sig_parse()). */
struct egpu_helper_sig {
	size_t sz; /**< sizeof(struct egpu_helper_sig) */
	uint32_t nargs;
	bool ret_void;     /**< "void": else the helper returns a u64 */
	uint8_t kind[5];   /**< enum egpu_helper_arg of each argument */
	uint32_t size[5];  /**< bytes of each buffer argument, else 0 */
};
#define egpu_helper_sig__last_field size

/**
 * Parse @p signature as egpu_helper_register() does, into @p out (its sz
 * set by the caller): for bindings that convert a generic helper's
 * arguments (buffers' sizes and constness) to their language's types.
 * EGPU_EINVAL with the message egpu_helper_register() would give.
 */
EGPU_API int egpu_helper_sig_parse(const char *signature,
				   struct egpu_helper_sig *out);

/** Who makes the calls GPU threads queued (egpu_helper_set_dispatch()). */
enum egpu_helper_dispatch {
	/** A thread of the context, started with the call ring (default). */
	EGPU_DISPATCH_THREAD = 0,
	/** The application, in egpu_helper_poll(). */
	EGPU_DISPATCH_POLL = 1,
};

/** Choose who makes the GPU's calls; switching to POLL stops the thread. */
EGPU_API int egpu_helper_set_dispatch(egpu_ctx *ctx,
				  enum egpu_helper_dispatch how);
/**
 * Make the calls GPU threads queued, waiting up to @p timeout_ms (as
 * egpu_print_poll()) when there are none. Also works beside the
 * dispatcher thread: after synchronizing with a kernel, it makes every
 * call that kernel queued before returning. Returns the calls made, or a
 * negative EGPU_E* code (EGPU_EFORMAT: a record naming an unknown helper).
 */
EGPU_API int egpu_helper_poll(egpu_ctx *ctx, int timeout_ms);
/** GPU calls dropped because the call ring was full. */
EGPU_API uint64_t egpu_helper_drops(const egpu_ctx *ctx);

/* ======================================================================
 * Clocks: GPU timer readings on the host's clock (docs/clock.md)
 *
 * Probes read the GPU's %globaltimer (bpf_get_globaltimer,
 * bpf_ktime_get_ns), a clock of the GPU's own. A calibration relates it to
 * the host's CLOCK_MONOTONIC: a one-thread kernel and the host play
 * ping-pong through page-locked host memory, and the shortest round trip
 * bounds the error. A context calibrates when it first uses the GPU (its
 * maps or print ring placed in GPU memory); egpu_clock_sync() measures
 * again, as the two clocks drift apart.
 * ====================================================================== */

/** A calibration of the GPU's %globaltimer against CLOCK_MONOTONIC. */
struct egpu_clock {
	size_t sz;              /**< sizeof(struct egpu_clock) */
	/** %globaltimer minus CLOCK_MONOTONIC, in nanoseconds. */
	int64_t offset_ns;
	/** A timer reading g taken at host time h maps to g - offset_ns,
	 *  which is within error_ns of h (when measured; add drift after). */
	uint64_t error_ns;
	uint64_t host_ns;       /**< CLOCK_MONOTONIC at the measurement */
	uint64_t round_trip_ns; /**< host→GPU→host time of the round kept */
	uint64_t step_ns;       /**< update step of %globaltimer the GPU saw */
	uint32_t rounds;        /**< rounds answered; the shortest is kept */
};

/**
 * Calibrate the clocks of @p ctx now and fill @p out (set its sz first).
 * Binds @p ctx to the current CUDA context as any first GPU use does.
 * Costs a launch and 64 round trips over the bus (the first calibration
 * of a context also loads a small module); the kernel runs on a stream of
 * its own that neither waits for nor holds up the default stream.
 * EGPU_ENODEV without a GPU, EGPU_EINVAL for an offline context,
 * EGPU_EBUSY when the GPU did not run the kernel within half a second.
 */
EGPU_API int egpu_clock_sync(egpu_ctx *ctx, struct egpu_clock *out);
/**
 * The last calibration of @p ctx (the one made when its probes first ran:
 * egpu_module_load(), a GPU run; or by egpu_clock_sync()), calibrating
 * now when there is none.
 */
EGPU_API int egpu_clock_get(egpu_ctx *ctx, struct egpu_clock *out);
/**
 * Host time (CLOCK_MONOTONIC, ns) of GPU timer reading @p gpu_ns:
 * gpu_ns - offset_ns, clamped to [0, UINT64_MAX]. 0 when @p clk is NULL.
 */
EGPU_API uint64_t egpu_clock_gpu_to_host(const struct egpu_clock *clk,
					 uint64_t gpu_ns);

/* ======================================================================
 * Tracing: CPU call stacks joined to GPU kernels (docs/trace.md)
 *
 * CUPTI (libcupti, opened with dlopen) reports every kernel launch, graph
 * launch, memcpy and memset of the process. At each launch a callback on
 * the launching thread captures the host call stack; CUPTI's activity
 * records give the GPU start and end; the two are joined by correlation
 * id. One trace per process at a time (CUPTI allows one subscriber).
 * ====================================================================== */

/** Opaque trace session. */
typedef struct egpu_trace egpu_trace;

/** Options for egpu_trace_start(). */
struct egpu_trace_opts {
	size_t sz;            /**< sizeof(struct egpu_trace_opts) */
	uint32_t max_frames;  /**< host frames kept per launch; 0: 64 */
	bool no_copies;       /**< do not record memcpy / memset */
	size_t buffer_size;   /**< bytes per CUPTI activity buffer; 0: 4 MiB */
	/** no Python frames (by default a thread running CPython 3.10+ gets
	 *  its Python frames in place of the interpreter's) */
	bool no_python;
	/** flight recorder: keep only the last keep_ns of the trace (memory
	 *  stays that of the window, about 2 s more); 0: all of it */
	uint64_t keep_ns;
	/** stream the Perfetto timeline (EGPU_TRACE_PERFETTO) to this file
	 *  while tracing: the tracer's memory stays bounded whatever the
	 *  run's length; the trace then keeps totals only (the other
	 *  formats but EGPU_TRACE_CHROME, the stats, the kernels). Not with
	 *  keep_ns. NULL: the trace is held until written. */
	const char *stream_path;
	/** with stream_path: each file at most about this many bytes (it
	 *  ends between two slices; at least 64 KiB); 0: no limit */
	uint64_t max_size;
	/** with max_size: keep this many files, rotated (the newest in
	 *  stream_path, older ones as STEM.1.EXT, STEM.2.EXT, ...); 0 or 1:
	 *  the timeline stops at max_size, the totals go on */
	uint32_t max_files;
};
#define egpu_trace_opts__last_field max_files

/**
 * Start tracing the process: launches from now on are recorded. NULL on
 * failure (EGPU_ENODEV without libcupti or a driver, EGPU_EBUSY while
 * another trace runs). Needs no GPU context yet.
 */
EGPU_API egpu_trace *egpu_trace_start(const struct egpu_trace_opts *opts);
/**
 * Stop recording: flush CUPTI's buffers (after synchronizing the device's
 * work) and join launches to their GPU records. The data stays readable
 * until egpu_trace_free().
 */
EGPU_API int egpu_trace_stop(egpu_trace *trace);
/** Free a trace, stopping it first if needed. NULL-safe. */
EGPU_API void egpu_trace_free(egpu_trace *trace);

/** Output formats of egpu_trace_write(). */
enum egpu_trace_format {
	/** Folded stacks weighted by GPU time in microseconds:
	 *  "main;f;cudaLaunchKernel;[GPU_Kernel]k 3099" */
	EGPU_TRACE_FOLDED = 1,
	/** Chrome trace / Perfetto JSON timeline with launch→kernel flows
	 *  (each call carries its stack as text: for small traces). */
	EGPU_TRACE_CHROME = 2,
	/** Self-contained interactive SVG flame graph. */
	EGPU_TRACE_SVG = 3,
	/** Text table: top kernels by GPU time, launches, hottest paths. */
	EGPU_TRACE_SUMMARY = 4,
	/** Perfetto's protobuf trace (.perfetto-trace): the timeline of
	 *  EGPU_TRACE_CHROME with names and call stacks interned, about
	 *  56 bytes a launch (docs/trace-outputs.md); streamed while
	 *  tracing with egpu_trace_opts.stream_path. */
	EGPU_TRACE_PERFETTO = 5,
};

/** Write a stopped trace as @p format to @p path ("-": stdout). */
EGPU_API int egpu_trace_write(const egpu_trace *trace,
			      enum egpu_trace_format format, const char *path);

/** Totals of a stopped trace (egpu_trace_stats()). */
struct egpu_trace_stats {
	size_t sz;          /**< sizeof(struct egpu_trace_stats) */
	uint64_t launches;  /**< launch API calls seen (kernel and graph) */
	uint64_t kernels;   /**< kernel executions CUPTI reported */
	uint64_t matched;   /**< kernel executions joined to a launch stack */
	uint64_t copies;    /**< memcpy and memset operations */
	uint64_t lost;      /**< activity records CUPTI dropped */
	uint64_t gpu_ns;    /**< sum of kernel durations */
	uint32_t devices;   /**< distinct devices that ran kernels */
	/* What tracing cost the application's threads (its callbacks). */
	uint64_t host_ns;     /**< time in the tracer's callbacks */
	uint64_t stack_ns;    /**< of which unwinding native stacks */
	uint64_t python_ns;   /**< of which walking Python frames */
	uint64_t stacks;      /**< native stacks taken */
	/** of which unwound by backtrace(), a full DWARF unwind, because a
	 *  frame's rule is beyond libegpu's cached unwinder */
	uint64_t stacks_slow;
	/** of which finished from the same thread's previous stack (the
	 *  outer frames it shares with it are compared, not unwound) */
	uint64_t stacks_reused;
	/** the first frame that sent a stack to backtrace(), named as the
	 *  trace's stacks name it (its function, else "module+0xoffset");
	 *  "" when none; valid until egpu_trace_free() */
	const char *slow_frame;
	/** calls and operations the flight recorder let go (keep_ns) */
	uint64_t dropped;
	/** the streamed timeline stopped at max_size (stream_path) */
	bool stream_full;
};

/** Fill @p stats (set its sz first). */
EGPU_API int egpu_trace_stats(const egpu_trace *trace,
			      struct egpu_trace_stats *stats);

/** One kernel (by name) of a stopped trace, by GPU time. */
struct egpu_trace_kernel {
	const char *name;       /**< demangled kernel name */
	uint64_t launches;      /**< executions */
	uint64_t gpu_ns;        /**< their summed duration */
	/** CPU call path ("main;f;cudaLaunchKernel") with the most GPU time
	 *  in this kernel; "" when no launch was matched. */
	const char *hottest_path;
	uint64_t hottest_ns;    /**< GPU time of that path */
};

/** Number of distinct kernels in a stopped trace. */
EGPU_API size_t egpu_trace_kernel_cnt(const egpu_trace *trace);
/**
 * Kernel @p i in descending GPU time; NULL past the end. Valid until
 * egpu_trace_free().
 */
EGPU_API const struct egpu_trace_kernel *
egpu_trace_kernel(const egpu_trace *trace, size_t i);

/* ======================================================================
 * Fleet export: maps as Prometheus metrics, traces as pprof profiles
 * (docs/fleet.md)
 * ====================================================================== */

/** The GPU a context's maps live on (egpu_ctx_gpu()). */
struct egpu_gpu_info {
	size_t sz;         /**< sizeof(struct egpu_gpu_info) */
	int index;         /**< CUDA device ordinal */
	char uuid[48];     /**< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
};

/**
 * The GPU of @p ctx. EGPU_ENODEV while the context has not used a GPU
 * (its maps are then host memory).
 */
EGPU_API int egpu_ctx_gpu(const egpu_ctx *ctx, struct egpu_gpu_info *info);

/** How a map's values become metrics. */
enum egpu_metric_kind {
	/** Decided from the map (docs/fleet.md): skipped for rings and
	 *  global data, a histogram when the name ends in "hist", else a
	 *  counter. */
	EGPU_METRIC_AUTO = 0,
	EGPU_METRIC_COUNTER = 1,   /**< each key's value, only growing */
	EGPU_METRIC_GAUGE = 2,     /**< each key's value, up or down */
	/** log2 buckets: key (u32) b counts values of [2^b, 2^(b+1)) (b 0:
	 *  [0, 2)); with EGPU_METRIC_KEY_KERNEL the key is
	 *  { u32 kernel_id; u32 b; } */
	EGPU_METRIC_HISTOGRAM = 3,
	EGPU_METRIC_SKIP = 4,      /**< not exported */
};

/** What a map's key means: which label it becomes. */
enum egpu_metric_key {
	/** none for one-entry maps and keys not of 4 or 8 bytes, else
	 *  EGPU_METRIC_KEY_INDEX */
	EGPU_METRIC_KEY_AUTO = 0,
	EGPU_METRIC_KEY_NONE = 1,   /**< every key's value summed: one series */
	EGPU_METRIC_KEY_INDEX = 2,  /**< label key="N" (4- or 8-byte keys) */
	EGPU_METRIC_KEY_KERNEL = 3, /**< key is a kernel id: label kernel="name" */
};

/** How one map is exported (egpu_metrics_add_map()). */
struct egpu_metric_desc {
	size_t sz;                 /**< sizeof(struct egpu_metric_desc) */
	/** Metric name; NULL: "egpu_" + the map name (+ "_total" for a
	 *  counter), characters outside [a-zA-Z0-9_:] as '_'. */
	const char *name;
	const char *help;          /**< HELP text; NULL: names the map */
	enum egpu_metric_kind kind;
	enum egpu_metric_key key;
	/** Labelled series kept (largest first; the rest are summed into
	 *  one labelled "other"); 0: the server's egpu_metrics_opts.top_n. */
	uint32_t top_n;
};

/** Opaque set of maps exported as metrics. */
typedef struct egpu_metrics egpu_metrics;

/** Options for egpu_metrics_new() and egpu_metrics_serve(). */
struct egpu_metrics_opts {
	size_t sz;                 /**< sizeof(struct egpu_metrics_opts) */
	/** Every map of these objects is added as EGPU_METRIC_AUTO. */
	egpu_obj *const *objs;
	size_t obj_cnt;            /**< entries of @ref objs */
	/**
	 * Declarative descriptions overriding AUTO for maps of @ref objs:
	 * "MAP=KIND[/KEY],..." with KIND counter|gauge|histogram|skip and KEY
	 * none|index|kernel, e.g. "launches=counter/kernel,lat_hist=histogram".
	 */
	const char *spec;
	/** Labelled series per metric (top N + "other"); 0: 20. */
	uint32_t top_n;
	/** Labels added to every series: "team=ml,run=7" (NULL: none). */
	const char *labels;
	/** egpu_metrics_serve(): "[HOST]:PORT" to listen on; port 0 picks a
	 *  free one (egpu_metrics_port()). */
	const char *listen;
};
#define egpu_metrics_opts__last_field listen

/**
 * Maps to be exported as metrics, read from @p ctx's maps at each scrape
 * (a read never waits for the application's kernels). NULL on failure.
 */
EGPU_API egpu_metrics *egpu_metrics_new(egpu_ctx *ctx,
					const struct egpu_metrics_opts *opts);
/**
 * egpu_metrics_new(), then serve /metrics over HTTP on opts->listen
 * (libmicrohttpd, opened at this call: EGPU_ENOTSUP without it).
 */
EGPU_API egpu_metrics *egpu_metrics_serve(egpu_ctx *ctx,
					  const struct egpu_metrics_opts *opts);
/** Export @p map as @p desc says (NULL: AUTO). Safe while serving. */
EGPU_API int egpu_metrics_add_map(egpu_metrics *m, egpu_map *map,
				  const struct egpu_metric_desc *desc);
/**
 * Name the kernel ids of an instrumentation (its egpu_report), for
 * kernel="..." labels; ids never named read "kernel_ID".
 */
EGPU_API int egpu_metrics_add_kernels(egpu_metrics *m,
				      const struct egpu_report *report);
/**
 * The Prometheus text exposition of every exported map, as a scrape
 * would get it: a malloc'ed NUL-terminated *text of *len bytes.
 */
EGPU_API int egpu_metrics_render(egpu_metrics *m, char **text, size_t *len);
/** TCP port being served (after egpu_metrics_serve()), or 0. */
EGPU_API int egpu_metrics_port(const egpu_metrics *m);
/** Stop serving and free. NULL-safe. Free before the maps' objects. */
EGPU_API void egpu_metrics_free(egpu_metrics *m);

/** Options for egpu_trace_write_pprof(). */
struct egpu_pprof_opts {
	size_t sz;                 /**< sizeof(struct egpu_pprof_opts) */
	bool no_copies;            /**< leave memcpy / memset out */
};
#define egpu_pprof_opts__last_field no_copies

/**
 * Write a stopped trace as a gzip'd pprof Profile to @p path: samples of
 * GPU nanoseconds and launches by CPU stack, the GPU operation as the
 * leaf frame, labels stream, device and graph (docs/fleet.md).
 */
EGPU_API int egpu_trace_write_pprof(const egpu_trace *trace, const char *path,
				    const struct egpu_pprof_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* EGPU_H */
