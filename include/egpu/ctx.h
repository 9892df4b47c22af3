/* SPDX-License-Identifier: MIT */
/*
 * Context structs that probe programs receive in r1 (ctx), for eBPF
 * programs built with clang -target bpf. Plain C, fixed layout: the PTX
 * rewriter stores these fields at these offsets. Only base C types, so the
 * header compiles for -target bpf without a C library.
 */
#ifndef EGPU_CTX_H
#define EGPU_CTX_H


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
	unsigned long long kernel_id;
	/* Generic address of the kernel's parameter bytes as the launch
	 * passed them (ABI layout, each parameter at its alignment);
	 * read-only; 0 when the kernel has no parameters. */
	unsigned long long params;
	/* Number of parameter bytes at params. */
	unsigned int params_size;
	/* EGPU_CTX_ENTRY or EGPU_CTX_EXIT. */
	unsigned int attach;
	/* Exit probes: which ret/exit of the kernel (0, 1, ... in text
	 * order); entry probes: 0. */
	unsigned int site;
	unsigned int reserved;
};

_Static_assert(sizeof(struct egpu_kernel_ctx) == 32,
	       "struct egpu_kernel_ctx is 32 bytes");

#endif
