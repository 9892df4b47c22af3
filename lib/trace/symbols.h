/* SPDX-License-Identifier: MIT */
/*
 * Return addresses to function names (symbols.c), and the interned
 * strings and pointer map they are kept in (symbols_str.c): the trace
 * collector's stacks and egpu memcheck's allocation sites use them.
 */
#ifndef EGPU_TRACE_SYMBOLS_H
#define EGPU_TRACE_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* A pointer-sized key's hash, for open addressing. */
static inline uint64_t hash_word(uintptr_t k)
{
	uint64_t h = k * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 29);
}

struct strpool {
	char **slot;
	size_t cap, n;
};

/* The pool's one copy of @s (first @n bytes); NULL when out of memory. */
const char *strpool_add(struct strpool *p, const char *s, size_t n);
void strpool_free(struct strpool *p);

/* uintptr_t (never 0) -> void *; grows as needed. */
struct ptrmap {
	uintptr_t *key;
	void **val;
	size_t cap, n;
};

void *ptrmap_get(const struct ptrmap *m, uintptr_t key);
int ptrmap_put(struct ptrmap *m, uintptr_t key, void *val);
void ptrmap_free(struct ptrmap *m);

/* Demangled @name interned in @p ("_Z..." names only; others as given). */
const char *strpool_demangled(struct strpool *p, const char *name);

/* The call instruction's address of return address @raw[@i]: the byte
 * before it. */
static inline uintptr_t sym_call_site(void *const *raw, uint32_t i)
{
	return (uintptr_t)raw[i] - 1;
}

/* symbols.c: return addresses to names, cached per address. */
enum sym_role {
	SYM_OTHER,
	SYM_CUDA,   /* libcuda, libcudart or libcupti */
	SYM_SELF,   /* the module that holds libegpu */
	SYM_LIBC,   /* the C library (program and thread start) */
};

struct symbolizer;
struct symbolizer *sym_new(struct strpool *names);
enum sym_role sym_role(struct symbolizer *s, uintptr_t addr);
/*
 * The function holding @addr, demangled, or "lib.so+0x1a2b" (offset in
 * the file's address space) where no symbol covers it; NULL when out of
 * memory.
 */
const char *sym_name(struct symbolizer *s, uintptr_t addr);
void sym_free(struct symbolizer *s);
/*
 * Whether demangled function @name is a statically linked CUDA runtime's
 * (in the application's own file): its internals (cudart::*, __cudart*,
 * libcudart_static_*), and API function @api
 * and its C++ wrappers (cudaLaunchKernel<T>, cudaLaunchKernelEx<...> for
 * cudaLaunchKernelExC); any cuFoo or cudaFoo where @api is NULL.
 */
bool sym_cuda_runtime(const char *name, const char *api);
/* Program and thread start: _start (in the program), then the C
 * library's __libc_start_main, start_thread, clone3. */
bool sym_startup(struct symbolizer *s, uintptr_t addr);

#endif
