/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the host (CPU) back end: C functions the translated code
 * calls by absolute address. Each takes exactly the helper's number of
 * uint64_t arguments and returns uint64_t.
 */
#ifndef EGPU_JIT_HOST_HELPERS_H
#define EGPU_JIT_HOST_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

struct host_helper {
	int32_t id;
	const char *symbol; /* its name in the translated code */
	void (*fn)(void);   /* the C function, cast */
};

extern const struct host_helper host_helpers[];
extern const size_t host_helper_cnt;

const struct host_helper *host_helper_find(int32_t id);

/*
 * Code with jit_input.gpu_maps (host_gpu_maps.c): the map and clock
 * helpers that reach the object's maps in GPU memory; all of them, and
 * the one numbered @id or NULL (then host_helper_find()'s is used).
 */
const struct host_helper *host_gpu_helpers(size_t *n);
const struct host_helper *host_gpu_helper_find(int32_t id);
/* Around one run on the calling thread: the clock's offset to the GPU's
 * timer; then the write-back of changed lookups (0 or the first error). */
void host_gpu_begin(int64_t timer_offset);
int host_gpu_end(void);

/*
 * Append @fmt (at most @fmt_len bytes, or up to its NUL) to @sb formatted
 * the way bpf_trace_printk does with arguments @args (host_printk.c).
 */
void host_format(struct strbuf *sb, const char *fmt, size_t fmt_len,
		 const uint64_t *args, unsigned nargs);

/*
 * Turns a %s argument into a host string (NULL: "(null)"); print records
 * from the GPU carry device addresses (lib/api/gpu_print.c).
 */
typedef const char *(*host_str_fn)(void *user, uint64_t addr);
/* host_format(), with %s arguments passed through @str. */
void host_format_with(struct strbuf *sb, const char *fmt, size_t fmt_len,
		      const uint64_t *args, unsigned nargs, host_str_fn str,
		      void *user);

#endif
