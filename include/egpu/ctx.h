/* SPDX-License-Identifier: MIT */
/*
 * Context structs that probe programs receive in r1 (ctx), for eBPF
 * programs built with clang -target bpf. Plain C, fixed layout: the PTX
 * rewriter stores these fields at these offsets.
 */
#ifndef EGPU_CTX_H
#define EGPU_CTX_H

#ifdef __bpf__
/* clang -target bpf has no C library headers: the compiler's own types. */
typedef __UINT64_TYPE__ uint64_t;
typedef __UINT32_TYPE__ uint32_t;
#else
#include <stdint.h>
#endif

/* egpu_kernel_ctx.attach */
#define EGPU_CTX_ENTRY 1
#define EGPU_CTX_EXIT 2

/*
 * ctx of SEC("gpu/entry/...") and SEC("gpu/exit/...") programs, 32 bytes,
 * read-only; r2 (ctx_len) is sizeof(struct egpu_kernel_ctx).
 */
struct egpu_kernel_ctx {
	/* Index of the kernel among the .entry definitions of its PTX module,
	 * in text order (instrumentation reports the names). */
	uint64_t kernel_id;
	/* Generic address of the kernel's parameter bytes as the launch
	 * passed them (ABI layout, each parameter at its alignment);
	 * read-only; 0 when the kernel has no parameters. */
	uint64_t params;
	/* Number of parameter bytes at params. */
	uint32_t params_size;
	/* EGPU_CTX_ENTRY or EGPU_CTX_EXIT. */
	uint32_t attach;
	/* Exit probes: which ret/exit of the kernel (0, 1, ... in text
	 * order); entry probes: 0. */
	uint32_t site;
	uint32_t reserved;
};

#endif
