/* SPDX-License-Identifier: MIT */
/*
 * egpu memcheck's hooks in the attach agent (docs/memcheck.md): the
 * driver's allocation entry points, wrapped so that the allocation table
 * follows the application. hook.c hands each lookup (dlsym,
 * cuGetProcAddress) to memcheck_wrap(); the wrappers are also exported for
 * programs linked with -lcuda. With EGPU_MEMCHECK unset they pass through.
 *
 * Each entry point has three wrappers: the export (calling the driver's
 * function of the same name), and two for lookups, since a lookup of one
 * name may hand out two functions (cuGetProcAddress gives the per-thread
 * default stream variant, _ptsz, under the plain name): the first pointer
 * seen gets wrapper A, a second one wrapper B, treated as the _ptsz (its
 * stream 0 is the per-thread stream).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "attach/attach.h"
#include "memcheck/memcheck_dev.h"
#include "memcheck/memcheck_globals.h"
#include "attach/memcheck_hook.h"
#include "memcheck/memcheck_table.h"
#include "core/core.h"
#include "cuda/cu.h"

#define EXPORT __attribute__((visibility("default")))
#define STR(x) #x
#define SYMBOL(x) STR(x) /* cuda.h's versioned name: cuMemAlloc_v2 */
#define MC_MSG "egpu memcheck: "
#define MAX_SLOTS (1u << 20)
#define MAX_ERRORS 10 /* table errors printed */
#define PADDING 256   /* default EGPU_MEMCHECK_PADDING */
#define MAX_PADDING (1u << 30)

static pthread_mutex_t make_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mc_table *table;
static struct mc_dev *dev;
static int state; /* 0: not yet, 1: on, -1: off (unset or failed) */
static unsigned errors;

static bool enabled(void)
{
	const char *v;

	if (!__atomic_load_n(&state, __ATOMIC_ACQUIRE)) {
		v = getenv("EGPU_MEMCHECK");
		if (!(v && *v && strcmp(v, "0")))
			__atomic_store_n(&state, -1, __ATOMIC_RELEASE);
	}
	return __atomic_load_n(&state, __ATOMIC_ACQUIRE) >= 0;
}

/* The table, made in the current context at the first tracked call. */
static struct mc_table *the_table(void)
{
	static const struct mc_guard busy = { agent_enter, agent_leave };
	struct mc_backend be;

	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) > 0)
		return table;
	pthread_mutex_lock(&make_lock);
	if (!state) {
		if (!mc_dev_new(MAX_SLOTS, &busy, &dev)) {
			be = mc_dev_backend(dev);
			table = mc_table_new(&be);
		}
		/* without its stacks, a report names no allocation's place */
		if (table && mc_table_keep_origins(table))
			fprintf(stderr, MC_MSG "%s\n", egpu_errmsg());
		if (!table)
			fprintf(stderr, MC_MSG "off: %s\n", egpu_errmsg());
		__atomic_store_n(&state, table ? 1 : -1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&make_lock);
	return table;
}

bool memcheck_on(void)
{
	return enabled();
}

struct mc_table *memcheck_start(void)
{
	return enabled() ? the_table() : NULL;
}

struct mc_dev *memcheck_dev(void)
{
	return __atomic_load_n(&state, __ATOMIC_ACQUIRE) > 0 ? dev : NULL;
}

struct mc_table *memcheck_table(void)
{
	return __atomic_load_n(&state, __ATOMIC_ACQUIRE) > 0 ? table : NULL;
}

/*
 * Bytes to ask the driver for, for an allocation of @n the table records:
 * with EGPU_MEMCHECK_PADDING bytes (default 256) more, unrecorded, so
 * that the next allocation never starts right at its end and an access
 * just past it (or just before the next) lands where none is live.
 */
static size_t padded(size_t n)
{
	static size_t pad = SIZE_MAX;
	const char *v;
	size_t want;

	if (!enabled() || agent_busy())
		return n;
	if (__atomic_load_n(&pad, __ATOMIC_RELAXED) == SIZE_MAX) {
		v = getenv("EGPU_MEMCHECK_PADDING");
		want = v && *v ? strtoull(v, NULL, 10) : PADDING;
		__atomic_store_n(&pad, want <= MAX_PADDING ? want : PADDING,
				 __ATOMIC_RELAXED);
	}
	return n > SIZE_MAX - pad ? n : n + pad;
}

/* Whether a successful call should change the table. */
static bool tracking(CUresult res)
{
	return res == CUDA_SUCCESS && enabled() && !agent_busy() &&
	       the_table();
}

static void note(int err)
{
	unsigned n;

	if (!err || err == EGPU_ENOENT) /* a free of memory made before us */
		return;
	n = __atomic_fetch_add(&errors, 1, __ATOMIC_RELAXED);
	if (n < MAX_ERRORS)
		fprintf(stderr, MC_MSG "allocation table: %s%s\n", egpu_errmsg(),
			n + 1 == MAX_ERRORS ? " (no more such messages)" : "");
}

/* The application's stream as the table's (never NULL: that is "now"). */
static void *stream_of(CUstream s, bool ptsz)
{
	if (s)
		return s;
	return ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
}

static void free_now(uint64_t p)
{
	if (enabled() && !agent_busy() && the_table())
		note(mc_table_free_at(table, p, NULL, false));
}

/* The bodies: @real is the driver's function, @ptsz its stream 0 kind. */
#define BODY(fn) static CUresult fn##_body(__typeof__(&fn) real, bool ptsz,

BODY(cuMemAlloc) CUdeviceptr *p, size_t n)
{
	CUresult res = real(p, padded(n));

	(void)ptsz;
	if (tracking(res))
		note(mc_table_alloc(table, *p, n, MC_KIND_ALLOC));
	return res;
}

BODY(cuMemAllocPitch) CUdeviceptr *p, size_t *pitch, size_t w, size_t h,
			unsigned elt)
{
	CUresult res = real(p, pitch, w, h, elt);

	(void)ptsz;
	if (tracking(res))
		note(mc_table_alloc(table, *p, *pitch * h, MC_KIND_PITCH));
	return res;
}

BODY(cuMemAllocManaged) CUdeviceptr *p, size_t n, unsigned flags)
{
	CUresult res = real(p, padded(n), flags);

	(void)ptsz;
	if (tracking(res))
		note(mc_table_alloc(table, *p, n, MC_KIND_MANAGED));
	return res;
}

/* Host memory is reached at its own address (unified addressing). */
BODY(cuMemHostAlloc) void **pp, size_t n, unsigned flags)
{
	CUresult res = real(pp, n, flags);

	(void)ptsz;
	if (tracking(res))
		note(mc_table_alloc(table, (uintptr_t)*pp, n, MC_KIND_HOST));
	return res;
}

BODY(cuMemAllocHost) void **pp, size_t n)
{
	CUresult res = real(pp, n);

	(void)ptsz;
	if (tracking(res))
		note(mc_table_alloc(table, (uintptr_t)*pp, n, MC_KIND_HOST));
	return res;
}

BODY(cuMemHostRegister) void *p, size_t n, unsigned flags)
{
	CUresult res = real(p, n, flags);

	(void)ptsz;
	if (tracking(res))
		note(mc_table_alloc(table, (uintptr_t)p, n, MC_KIND_REGISTERED));
	return res;
}

/* Frees leave the table first: the address may be handed out again by
 * another thread as soon as the driver has it back. */
BODY(cuMemFree) CUdeviceptr p)
{
	(void)ptsz;
	free_now(p);
	return real(p);
}

BODY(cuMemFreeHost) void *p)
{
	(void)ptsz;
	free_now((uintptr_t)p);
	return real(p);
}

BODY(cuMemHostUnregister) void *p)
{
	(void)ptsz;
	free_now((uintptr_t)p);
	return real(p);
}

static void note_async(CUresult res, CUdeviceptr p, size_t n,
		       enum mc_kind kind, CUstream s, bool ptsz)
{
	if (tracking(res))
		note(mc_table_alloc_async(table, p, n, kind, stream_of(s, ptsz),
					  mc_dev_capturing(dev, s)));
}

BODY(cuMemAllocAsync) CUdeviceptr *p, size_t n, CUstream s)
{
	CUresult res = real(p, padded(n), s);

	note_async(res, *p, n, MC_KIND_ASYNC, s, ptsz);
	return res;
}

BODY(cuMemAllocFromPoolAsync) CUdeviceptr *p, size_t n, CUmemoryPool pool,
				CUstream s)
{
	CUresult res = real(p, padded(n), pool, s);

	note_async(res, *p, n, MC_KIND_POOL, s, ptsz);
	return res;
}

BODY(cuMemFreeAsync) CUdeviceptr p, CUstream s)
{
	if (enabled() && !agent_busy() && the_table())
		note(mc_table_free_at(table, p, stream_of(s, ptsz),
				      mc_dev_capturing(dev, s)));
	return real(p, s);
}

BODY(cuMemMap) CUdeviceptr p, size_t n, size_t off,
		 CUmemGenericAllocationHandle h, unsigned long long flags)
{
	CUresult res = real(p, n, off, h, flags);

	(void)ptsz;
	if (tracking(res))
		note(mc_table_map(table, p, n));
	return res;
}

static void unmap_now(CUdeviceptr p, size_t n)
{
	if (enabled() && !agent_busy() && the_table())
		note(mc_table_unmap(table, p, n));
}

BODY(cuMemUnmap) CUdeviceptr p, size_t n)
{
	(void)ptsz;
	unmap_now(p, n);
	return real(p, n);
}

BODY(cuMemAddressFree) CUdeviceptr p, size_t n)
{
	(void)ptsz;
	unmap_now(p, n);
	return real(p, n);
}

/* A module's variable, known once someone asks for its address (the
 * runtime does for every __device__ and __constant__ it registered). */
static void note_global(CUresult res, CUdeviceptr *p, size_t *n)
{
	if (tracking(res) && p && n && *n)
		note(mc_table_alloc(table, *p, *n, MC_KIND_GLOBAL));
}

/* A loaded module or library, for mc_table_globals(). */
struct loaded {
	CUmodule mod;
	CUlibrary lib;
};

static int loaded_global(void *user, const char *name, uint64_t *addr,
			 size_t *size)
{
	const struct loaded *l = user;
	CUdeviceptr p = 0;
	CUresult res = l->mod ? cu()->cuModuleGetGlobal(&p, size, l->mod, name)
			      : cu()->cuLibraryGetGlobal(&p, size, l->lib, name);

	*addr = p;
	return res;
}

void memcheck_loaded(const char *ptx, CUmodule mod, CUlibrary lib)
{
	struct loaded l = { mod, lib };
	bool was;

	if (!enabled() || !the_table())
		return;
	was = agent_enter();
	note(mc_table_globals(table, ptx, strlen(ptx), loaded_global, &l));
	agent_leave(was);
}

/* cuModuleGetGlobal_v2 and cuLibraryGetGlobal: a handle of type @H. */
#define GET_GLOBAL(fn, H)                                                     \
	static CUresult fn##_body(__typeof__(&fn) real, bool ptsz,            \
				  CUdeviceptr *p, size_t *n, H h,             \
				  const char *name)                           \
	{                                                                     \
		size_t bytes = 0;                                             \
		CUresult res = real(p, n ? n : &bytes, h, name);              \
                                                                              \
		(void)ptsz;                                                   \
		note_global(res, p, n ? n : &bytes);                          \
		return res;                                                   \
	}
GET_GLOBAL(cuModuleGetGlobal, CUmodule)
GET_GLOBAL(cuLibraryGetGlobal, CUlibrary)
#undef GET_GLOBAL

static CUresult cuCtxSynchronize_body(__typeof__(&cuCtxSynchronize) real,
				      bool ptsz)
{
	CUresult res = real();

	(void)ptsz;
	if (tracking(res)) { /* nothing runs: old indexes and slots free */
		mc_dev_reclaim(dev);
		mc_table_quiesced(table);
	}
	return res;
}
#undef BODY

/*
 * For each entry point (its cuda.h name, parameters, arguments): the
 * driver's functions [export, A, B], the export, and wrappers A and B.
 */
#define HOOKS(X)                                                              \
	X(cuMemAlloc, (CUdeviceptr * p, size_t n), (p, n))                    \
	X(cuMemAllocPitch,                                                    \
	  (CUdeviceptr * p, size_t * pitch, size_t w, size_t h, unsigned e),  \
	  (p, pitch, w, h, e))                                                \
	X(cuMemAllocManaged, (CUdeviceptr * p, size_t n, unsigned f), (p, n, f)) \
	X(cuMemHostAlloc, (void **pp, size_t n, unsigned f), (pp, n, f))      \
	X(cuMemAllocHost, (void **pp, size_t n), (pp, n))                     \
	X(cuMemHostRegister, (void *p, size_t n, unsigned f), (p, n, f))      \
	X(cuMemFree, (CUdeviceptr p), (p))                                    \
	X(cuMemFreeHost, (void *p), (p))                                      \
	X(cuMemHostUnregister, (void *p), (p))                                \
	X(cuMemAllocAsync, (CUdeviceptr * p, size_t n, CUstream s), (p, n, s)) \
	X(cuMemAllocFromPoolAsync,                                            \
	  (CUdeviceptr * p, size_t n, CUmemoryPool pool, CUstream s),         \
	  (p, n, pool, s))                                                    \
	X(cuMemFreeAsync, (CUdeviceptr p, CUstream s), (p, s))                \
	X(cuMemMap,                                                           \
	  (CUdeviceptr p, size_t n, size_t o, CUmemGenericAllocationHandle h, \
	   unsigned long long f),                                             \
	  (p, n, o, h, f))                                                    \
	X(cuMemUnmap, (CUdeviceptr p, size_t n), (p, n))                      \
	X(cuMemAddressFree, (CUdeviceptr p, size_t n), (p, n))                \
	X(cuModuleGetGlobal,                                                  \
	  (CUdeviceptr * p, size_t * n, CUmodule m, const char *name),        \
	  (p, n, m, name))                                                    \
	X(cuLibraryGetGlobal,                                                 \
	  (CUdeviceptr * p, size_t * n, CUlibrary l, const char *name),       \
	  (p, n, l, name))                                                    \
	X(cuCtxSynchronize, (void), ())

static void *(*driver_lookup)(const char *name);

void memcheck_driver_lookup(void *(*lookup)(const char *name))
{
	driver_lookup = lookup;
}

#define REAL_OF(fn, params, args) static __typeof__(&fn) fn##_real[3];
HOOKS(REAL_OF)
#undef REAL_OF

#define ARGS_OF(...) __VA_OPT__(, ) __VA_ARGS__
#define WRAPPERS(fn, params, args)                                            \
	EXPORT CUresult fn params                                             \
	{                                                                     \
		if (!fn##_real[0] && driver_lookup)                           \
			fn##_real[0] =                                        \
				(__typeof__(&fn))driver_lookup(SYMBOL(fn));   \
		if (!fn##_real[0])                                            \
			return CUDA_ERROR_NOT_INITIALIZED;                    \
		return fn##_body(fn##_real[0], false ARGS_OF args);           \
	}                                                                     \
	static CUresult fn##_a params                                         \
	{                                                                     \
		return fn##_body(fn##_real[1], false ARGS_OF args);           \
	}                                                                     \
	static CUresult fn##_b params                                         \
	{                                                                     \
		return fn##_body(fn##_real[2], true ARGS_OF args);            \
	}
HOOKS(WRAPPERS)
#undef WRAPPERS

struct hook {
	const char *name;
	void **real; /* [export, A, B] */
	void *wrapper[2];
};

#define HOOK_ENTRY(fn, params, args)                                          \
	{ SYMBOL(fn), (void **)fn##_real, { (void *)fn##_a, (void *)fn##_b } },
static const struct hook hooks[] = { HOOKS(HOOK_ENTRY) };
#undef HOOK_ENTRY

void *memcheck_wrap(const char *name, void *real_fn)
{
	const char *base = name;
	size_t n = strlen(name);

	int first = 0;

	if (n > 5 && !strcmp(name + n - 5, "_ptsz")) {
		n -= 5; /* named so: it can only be wrapper B */
		first = 1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(hooks); i++) {
		const struct hook *h = &hooks[i];

		if (strncmp(h->name, base, n) || h->name[n])
			continue;
		if (!real_fn || !enabled())
			return NULL;
		for (int k = first; k < 2; k++) {
			void *cur = __atomic_load_n(&h->real[1 + k], __ATOMIC_ACQUIRE);

			if (real_fn == h->wrapper[k])
				return real_fn; /* ours already */
			if (!cur && __atomic_compare_exchange_n(&h->real[1 + k], &cur,
								real_fn, false,
								__ATOMIC_ACQ_REL,
								__ATOMIC_ACQUIRE))
				return h->wrapper[k];
			if (cur == real_fn) /* seen before, or just now */
				return h->wrapper[k];
		}
		return NULL; /* a third function under one name: left alone */
	}
	return NULL;
}

/* cuGetProcAddress's names are unversioned; the wrappers are the _v2. */
const char *memcheck_proc_name(const char *symbol, int version)
{
	static const struct {
		const char *base, *v2;
		int since;
	} v2[] = {
		{ "cuMemAlloc", "cuMemAlloc_v2", 3020 },
		{ "cuMemAllocPitch", "cuMemAllocPitch_v2", 3020 },
		{ "cuMemFree", "cuMemFree_v2", 3020 },
		{ "cuMemAllocHost", "cuMemAllocHost_v2", 3020 },
		{ "cuMemHostRegister", "cuMemHostRegister_v2", 6050 },
		{ "cuModuleGetGlobal", "cuModuleGetGlobal_v2", 3020 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(v2); i++)
		if (!strcmp(symbol, v2[i].base))
			return version >= v2[i].since ? v2[i].v2 : symbol;
	return symbol;
}
