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
typedef __UINT16_TYPE__ uint16_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT32_TYPE__ int32_t;
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
	/* The kernel's id in its libegpu context: unique among every kernel
	 * the context instrumented (one module per kernel, as Triton makes,
	 * included), the same for the same kernel of the same module text;
	 * the first module's kernels are 0, 1, ... in text order. The host
	 * maps it back to names: egpu_kernel_info(). */
	uint64_t kernel_id;
	/* Generic address of the kernel's parameter bytes as the launch
	 * passed them (ABI layout, each parameter at its alignment);
	 * read-only; 0 when the kernel has no parameters. Two ways to read
	 * them:
	 * - directly, `*(const int *)(ctx->params + 24)`: the verifier
	 *   proves every such read lies below a constant byte R (constant or
	 *   bounded offsets, at most 32764), and the instrumenter puts the
	 *   probe only into kernels with at least R parameter bytes (a kernel
	 *   with fewer gets none: a warning in egpu_report.warnings, or an
	 *   error with egpu_attach_opts.strict). Writes are refused; any
	 *   other use (arithmetic with an unbounded value, a 32-bit half)
	 *   makes it a plain number;
	 * - bpf_egpu_read_param(ctx, &dst, size, offset), checked at run
	 *   time against params_size (dst zeroed, -EFAULT, when the bytes
	 *   are not there), for probes serving kernels of different
	 *   parameter sizes. */
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

/*
 * ctx of SEC("uprobe...") and SEC("uretprobe...") programs (host probes
 * of egpu attach, run on the CPU back end), 168 bytes, read-only: x86-64's
 * struct pt_regs, the layout bpftime's uprobes and libbpf's bpf_tracing.h
 * (PT_REGS_PARM1..6, PT_REGS_RC with __TARGET_ARCH_x86) read. di, si, dx,
 * cx, r8 and r9 hold the called function's first six integer arguments,
 * sp the address of the return address (stack arguments above it), ip
 * the function's address; uretprobes get the result in ax. Other fields
 * are 0.
 */
struct egpu_pt_regs {
	uint64_t r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	uint64_t ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

/* egpu_mem_ctx.kind */
#define EGPU_MEM_LOAD 1   /* ld, ldu, ld.global.nc */
#define EGPU_MEM_STORE 2  /* st */
#define EGPU_MEM_ATOMIC 3 /* atom, red */
#define EGPU_MEM_ASYNC 4  /* cp.async, cp.async.bulk (addr: the source) */

/* egpu_mem_ctx.space */
#define EGPU_SPACE_GENERIC 0
#define EGPU_SPACE_GLOBAL 1
#define EGPU_SPACE_SHARED 2 /* .shared, .shared::cta, .shared::cluster */
#define EGPU_SPACE_LOCAL 3
#define EGPU_SPACE_CONST 4
#define EGPU_SPACE_PARAM 5

/* egpu_mem_ctx.kernel_id of a site in a .func called by several kernels */
#define EGPU_MEM_KERNEL_SHARED 0xffffffffu

/*
 * ctx of SEC("gpu/mem/...") programs (and bpftime's kprobe/__memcapture),
 * 48 bytes, read-only; r2 (ctx_len) is sizeof(struct egpu_mem_ctx). The
 * program runs before the access, in the accessing thread, only when the
 * instruction's own predicate (if any) is true.
 */
struct egpu_mem_ctx {
	/* Generic address of the first byte accessed (cvta of the state
	 * space's address), the instruction's base register plus offset
	 * with symbols resolved. bpf_egpu_read_mem(ctx, &dst, size, offset)
	 * reads the bytes (a load's before it reads them, a store's before
	 * it overwrites them), within size. */
	uint64_t addr;
	/* Generic address of the instruction's PTX text, NUL-terminated, in
	 * global memory (for bpf_probe_read_str); also in the report. */
	uint64_t text;
	/* The kernel's id (as egpu_kernel_ctx.kernel_id), or
	 * EGPU_MEM_KERNEL_SHARED for a .func reached from several kernels
	 * of its module. */
	uint32_t kernel_id;
	/* Site number, unique in the context (numbered across its modules):
	 * egpu_report.mem_sites[site - egpu_report.site_base]. */
	uint32_t site;
	/* Bytes accessed: vector width times type size (cp.async: the copy
	 * size; bulk copies with a register size: its runtime value). */
	uint32_t size;
	uint16_t kind;  /* EGPU_MEM_* */
	uint16_t space; /* EGPU_SPACE_* */
	/* Source line of the access from the last .loc, 0 without one. */
	uint32_t line;
	uint32_t reserved;
	/* Stores (st, up to .v4): generic address of a copy of the size
	 * bytes the store is about to write, in the thread's local memory;
	 * 0 for other accesses (and .v8 stores). Read it with
	 * bpf_egpu_read_value(ctx, &dst, size, offset), which checks the
	 * bounds, e.g. to look at a float a kernel writes. */
	uint64_t value;
};

/*
 * A record of bpf_egpu_trace_warp (helper 521): one warp-level memory
 * access, 32 bytes when the lanes' addresses are affine (lane i of @mask
 * accessed base + (i - lowest lane of mask) * stride), followed otherwise
 * by one uint64_t address per lane of @mask, in lane order.
 */
struct egpu_warp_access {
	uint64_t base;   /* the lowest active lane's address */
	uint64_t tag;    /* the probe's (e.g. %globaltimer, a kernel id) */
	uint32_t mask;   /* the lanes that accessed together */
	uint32_t site;   /* egpu_mem_ctx.site */
	int32_t stride;  /* affine: bytes from one lane's address to the next's */
	uint16_t size;   /* bytes per lane (egpu_mem_ctx.size, at most 65535) */
	uint8_t kind;    /* egpu_mem_ctx.kind */
	uint8_t flags;   /* EGPU_WARP_AFFINE, or the addresses follow */
};

#define EGPU_WARP_AFFINE 1

#endif
