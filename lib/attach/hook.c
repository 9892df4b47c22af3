/* SPDX-License-Identifier: MIT */
/*
 * Interception of the CUDA driver's module loaders, LD_PRELOADed. Nothing
 * reaches the driver by symbol binding alone: the CUDA runtime (static,
 * nvcc's default, or libcudart.so) dlopens libcuda.so.1, looks up
 * cuGetProcAddress with dlsym and gets every driver function from it;
 * frameworks (Triton, PyTorch's NVRTC path) call dlsym or
 * cudaGetDriverEntryPoint (cuGetProcAddress again). So this library
 * answers dlsym and cuGetProcAddress for the loaders with its own
 * functions, and exports the loaders themselves for programs linked with
 * -lcuda. Everything else goes to the real driver untouched.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "attach/attach.h"
#include "attach/memcheck_hook.h"
#include "attach/uprobe.h"

#define EXPORT __attribute__((visibility("default")))

/* cuda.h renames cuGetProcAddress to its _v2; both exist in the driver. */
#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
			  cuuint64_t flags);

#define LOADERS(X)                                                            \
	X(cuModuleLoad)                                                       \
	X(cuModuleLoadData)                                                   \
	X(cuModuleLoadDataEx)                                                 \
	X(cuModuleLoadFatBinary)                                              \
	X(cuLibraryLoadData)                                                  \
	X(cuLibraryLoadFromFile)                                              \
	X(cuGetProcAddress)                                                   \
	X(cuGetProcAddress_v2)

#define REAL_FIELD(name) __typeof__(&name) name;
static struct {
	LOADERS(REAL_FIELD)
} real;
#undef REAL_FIELD

typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn real_dlsym;

static dlsym_fn find_real_dlsym(void)
{
	if (!real_dlsym)
		real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!real_dlsym)
		real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	return real_dlsym;
}

/* Our function for driver symbol @name, NULL if we leave it alone;
 * @real_fn is the driver's, kept for the wrapper. */
static void *wrap(const char *name, void *real_fn)
{
	void *probed, *checked;

#define WRAP(fn)                                                              \
	if (!strcmp(name, #fn)) {                                             \
		if (real_fn && real_fn != (void *)fn && !real.fn)            \
			real.fn = (__typeof__(real.fn))real_fn;               \
		return (void *)fn;                                            \
	}
	LOADERS(WRAP)
#undef WRAP
	/* A function both want is chained: memcheck's wrapper calls the host
	 * probes' (uprobe.h), which calls the driver's, so the probes see
	 * the application's call and memcheck's bookkeeping stays unseen. */
	probed = hook_api_wrap(name, real_fn);
	checked = memcheck_wrap(name, probed ? probed : real_fn);
	return checked ? checked : probed;
}

/* The driver's @name, for programs that bound our export directly. */
static void *driver_sym(const char *name)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *fn;

	if (!lib)
		lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib || !find_real_dlsym())
		return NULL;
	fn = real_dlsym(lib, name);
	wrap(name, fn);
	return fn;
}

/* memcheck's exports find the driver's functions through hook.c's lookup,
 * handed over here so that memcheck_hook.c never calls back into hook.c. */
__attribute__((constructor)) static void lend_lookup(void)
{
	memcheck_driver_lookup(driver_sym);
}

#define REAL(fn)                                                              \
	(real.fn || driver_sym(#fn) ? real.fn : NULL)

/* The loaders seen by this library's own dlsym are the driver's only if
 * they come from libcuda; anything else (another shim) is still wrapped. */
EXPORT void *dlsym(void *handle, const char *name)
{
	void *fn, *ours;

	if (!find_real_dlsym())
		return NULL;
	if (handle == RTLD_NEXT || strncmp(name, "cu", 2))
		return real_dlsym(handle, name); /* a tail call: RTLD_NEXT
						  * stays relative to the caller */
	fn = real_dlsym(handle, name);
	/* libegpu's own driver table (lib/cuda, resolved inside the agent)
	 * gets the driver's functions: its calls run no host probe */
	ours = fn && !agent_busy() ? wrap(name, fn) : NULL;
	return ours ? ours : fn;
}

static void swap_proc(const char *symbol, void **pfn, int version)
{
	void *ours;

	/* cuGetProcAddress asked for from a 12.0+ runtime is the _v2 */
	if (!strcmp(symbol, "cuGetProcAddress") && version >= 12000)
		symbol = "cuGetProcAddress_v2";
	symbol = memcheck_proc_name(symbol, version);
	ours = wrap(symbol, *pfn);
	if (ours)
		*pfn = ours;
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn,
				    int version, cuuint64_t flags,
				    CUdriverProcAddressQueryResult *status)
{
	__typeof__(&cuGetProcAddress_v2) fn = REAL(cuGetProcAddress_v2);
	CUresult res;

	if (!fn)
		return CUDA_ERROR_NOT_INITIALIZED;
	res = fn(symbol, pfn, version, flags, status);
	if (res == CUDA_SUCCESS && symbol && pfn && *pfn)
		swap_proc(symbol, pfn, version);
	return res;
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version,
				 cuuint64_t flags)
{
	__typeof__(&cuGetProcAddress) fn = REAL(cuGetProcAddress);
	CUresult res;

	if (!fn)
		return CUDA_ERROR_NOT_INITIALIZED;
	res = fn(symbol, pfn, version, flags);
	if (res == CUDA_SUCCESS && symbol && pfn && *pfn)
		swap_proc(symbol, pfn, version);
	return res;
}

/*
 * LOAD(the application's JIT options, call with the image, call with the
 * original arguments, what to do once the PTX is loaded): run the agent
 * on @image; load its PTX (linked with the runtime compiled apart where
 * it traces: agent_link) if it gave one and the driver takes it, else
 * the original.
 */
#define LOAD(image, len, via, jit_n, jit_keys, jit_vals, with_ptx, original,   \
	     on_ok)                                                           \
	do {                                                                  \
		struct attach_load ld = { 0 };                                \
		CUresult res;                                                 \
                                                                              \
		if (!agent_busy()) {                                          \
			agent_begin(image, len, via, &ld);                    \
			agent_link(&ld, jit_n, jit_keys, jit_vals);           \
		}                                                             \
		if (ld.ptx) {                                                 \
			const void *ptx_image = agent_image(&ld);             \
                                                                              \
			res = with_ptx;                                       \
			agent_end(&ld, res == CUDA_SUCCESS, res);             \
			if (res == CUDA_SUCCESS) {                            \
				on_ok;                                        \
				return res;                                   \
			}                                                     \
		}                                                             \
		return original;                                              \
	} while (0)

/* Module loads with their host probes (uprobe.h) around. */
#define PROBED_LOAD(fn, load, ...)                                            \
	do {                                                                  \
		struct call c_;                                               \
		CUresult res_;                                                \
                                                                              \
		hook_enter(HOST_FN_##fn, &c_, (uint64_t[]){ __VA_ARGS__ },    \
			   ARGS_N(__VA_ARGS__), (void *)real.fn);             \
		res_ = load;                                                  \
		uprobe_fire(HOST_FN_##fn, &c_.regs, true, (uint64_t)res_);    \
		return res_;                                                  \
	} while (0)

static CUresult module_load_data(CUmodule *mod, const void *image)
{
	if (!REAL(cuModuleLoadData))
		return CUDA_ERROR_NOT_INITIALIZED;
	LOAD(image, 0, "cuModuleLoadData", 0, NULL, NULL,
	     real.cuModuleLoadData(mod, ptx_image),
	     real.cuModuleLoadData(mod, image), memcheck_loaded(ld.ptx, *mod, NULL));
}

EXPORT CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
	PROBED_LOAD(cuModuleLoadData, module_load_data(mod, image), U(mod),
		    U(image));
}

static CUresult module_load_data_ex(CUmodule *mod, const void *image,
				    unsigned int n, CUjit_option *opts,
				    void **vals)
{
	if (!REAL(cuModuleLoadDataEx))
		return CUDA_ERROR_NOT_INITIALIZED;
	LOAD(image, 0, "cuModuleLoadDataEx", n, opts, vals,
	     real.cuModuleLoadDataEx(mod, ptx_image, n, opts, vals),
	     real.cuModuleLoadDataEx(mod, image, n, opts, vals),
	     memcheck_loaded(ld.ptx, *mod, NULL));
}

EXPORT CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image,
				   unsigned int n, CUjit_option *opts,
				   void **vals)
{
	PROBED_LOAD(cuModuleLoadDataEx,
		    module_load_data_ex(mod, image, n, opts, vals), U(mod),
		    U(image), n, U(opts), U(vals));
}

EXPORT CUresult cuModuleLoadFatBinary(CUmodule *mod, const void *fatbin)
{
	if (!REAL(cuModuleLoadFatBinary) || !REAL(cuModuleLoadData))
		return CUDA_ERROR_NOT_INITIALIZED;
	LOAD(fatbin, 0, "cuModuleLoadFatBinary", 0, NULL, NULL,
	     real.cuModuleLoadData(mod, ptx_image),
	     real.cuModuleLoadFatBinary(mod, fatbin),
	     memcheck_loaded(ld.ptx, *mod, NULL));
}

static CUresult library_load_data(CUlibrary *lib, const void *code,
				  CUjit_option *jopts, void **jvals,
				  unsigned int nj, CUlibraryOption *lopts,
				  void **lvals, unsigned int nl)
{
	if (!REAL(cuLibraryLoadData))
		return CUDA_ERROR_NOT_INITIALIZED;
	LOAD(code, 0, "cuLibraryLoadData", nj, jopts, jvals,
	     real.cuLibraryLoadData(lib, ptx_image, jopts, jvals, nj, lopts,
				    lvals, nl),
	     real.cuLibraryLoadData(lib, code, jopts, jvals, nj, lopts, lvals,
				    nl),
	     memcheck_loaded(ld.ptx, NULL, *lib));
}

EXPORT CUresult cuLibraryLoadData(CUlibrary *lib, const void *code,
				  CUjit_option *jopts, void **jvals,
				  unsigned int nj, CUlibraryOption *lopts,
				  void **lvals, unsigned int nl)
{
	PROBED_LOAD(cuLibraryLoadData,
		    library_load_data(lib, code, jopts, jvals, nj, lopts, lvals, nl),
		    U(lib), U(code), U(jopts), U(jvals), nj, U(lopts), U(lvals), nl);
}

/* A whole file, or NULL (the driver then reports the error itself). */
static void *slurp(const char *path, size_t *len)
{
	FILE *f = path ? fopen(path, "rb") : NULL;
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 &&
	    !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)n + 1)) &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n) {
		buf[n] = '\0';
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static CUresult module_from_file(CUmodule *mod, const char *path)
{
	size_t len = 0;
	void *image = slurp(path, &len);
	CUresult res;

	if (!image)
		return real.cuModuleLoad(mod, path);
	res = cuModuleLoadDataEx(mod, image, 0, NULL, NULL);
	free(image);
	return res;
}

EXPORT CUresult cuModuleLoad(CUmodule *mod, const char *path)
{
	if (!REAL(cuModuleLoad) || !REAL(cuModuleLoadDataEx))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (agent_busy())
		return real.cuModuleLoad(mod, path);
	return module_from_file(mod, path);
}

EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *lib, const char *path,
				      CUjit_option *jopts, void **jvals,
				      unsigned int nj, CUlibraryOption *lopts,
				      void **lvals, unsigned int nl)
{
	size_t len = 0;
	void *image;
	CUresult res;

	if (!REAL(cuLibraryLoadFromFile) || !REAL(cuLibraryLoadData))
		return CUDA_ERROR_NOT_INITIALIZED;
	image = agent_busy() ? NULL : slurp(path, &len);
	if (!image)
		return real.cuLibraryLoadFromFile(lib, path, jopts, jvals, nj,
						  lopts, lvals, nl);
	res = cuLibraryLoadData(lib, image, jopts, jvals, nj, lopts, lvals, nl);
	free(image);
	return res;
}
