/* SPDX-License-Identifier: MIT */
/*
 * bpf_trace_printk, bpf_trace_vprintk and bpf_puts on the GPU: a print
 * record (struct print_rec) in the context's print ring, formatted by the
 * host when it polls (lib/api/gpu_print.c). The record carries the device
 * address of the format, which the host maps back to its copy of the
 * program's read-only data (a format on the thread's stack travels in
 * the record: PRINT_FMT_INLINE), and the raw 64-bit arguments.
 *
 * Which ring: egpu_dev_print_ring, a variable the runtime only declares;
 * libegpu defines it, with the context's print ring's device address (0
 * when no probe prints), in a small module linked next to the runtime.
 */
#ifndef EGPU_DEVICE_PRINT_CUH
#define EGPU_DEVICE_PRINT_CUH

#include "ring.cuh"

extern "C" __device__ struct dev_ring *egpu_dev_print_ring;

/*
 * Bytes of the format at @fmt the record carries itself: those of a
 * printk format on the thread's stack (local memory: the host cannot map
 * it back to the program's global data), 0 for any other. (bpf_puts takes
 * read-only data only, as Linux's verifier demands.)
 */
RT_INLINE uint32_t print_inline_len(uint64_t fmt, uint32_t fmt_size,
				    uint16_t kind)
{
	if (kind != PRINT_PRINTK || !fmt || !__isLocal((const void *)fmt))
		return 0;
	return fmt_size < PRINT_INLINE_MAX ? fmt_size : PRINT_INLINE_MAX;
}

/* 0 once queued; -ENODEV without a print ring, -EAGAIN when it is full. */
RT_INLINE int64_t print_emit(uint64_t fmt, uint32_t fmt_size, uint16_t kind,
			     const void *args, uint32_t nargs, uint64_t kernel)
{
	struct dev_ring *r = egpu_dev_print_ring;
	uint32_t inl = print_inline_len(fmt, fmt_size, kind);
	uint32_t len = (uint32_t)sizeof(struct print_rec) + 8 * nargs +
		       ((inl + 7) & ~7u);
	struct print_rec *p;
	struct ring_hdr *h;

	if (!r)
		return -ENODEV;
	h = ring_reserve(r, len);
	if (!h)
		return -EAGAIN;
	p = (struct print_rec *)(h + 1);
	p->fmt = fmt;
	p->fmt_size = inl ? inl : fmt_size;
	p->kind = inl ? kind | PRINT_FMT_INLINE : kind;
	p->nargs = (uint16_t)nargs;
	p->block[0] = blockIdx.x;
	p->block[1] = blockIdx.y;
	p->block[2] = blockIdx.z;
	p->thread[0] = threadIdx.x;
	p->thread[1] = threadIdx.y;
	p->thread[2] = threadIdx.z;
	p->kernel = (uint32_t)kernel;
	p->reserved = 0;
	if (nargs)
		ring_copy_out((uint64_t *)p->args, args, 8 * nargs);
	if (inl) {
		char *dst = (char *)(p->args + nargs);
		const char *src = (const char *)fmt;

		for (uint32_t i = 0; i < ((inl + 7) & ~7u); i++)
			dst[i] = i + 1 < inl ? src[i] : '\0';
	}
	ring_publish(r, h, len, RING_COMMIT);
	return 0;
}

#endif
