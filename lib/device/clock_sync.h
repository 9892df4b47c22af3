/* SPDX-License-Identifier: MIT */
/*
 * Host↔GPU clock calibration: the mailbox shared by the host (C11,
 * lib/api/clock.c) and the calibration kernel (CUDA C, clock_sync.cu), and
 * the kernel's image built by nvcc and embedded in the library.
 *
 * The mailbox is one page of host memory, page-locked and mapped into the
 * GPU. One GPU thread and the host play ping-pong through it
 * (docs/clock.md):
 *
 *   host:  t0 = now; ping = n
 *   GPU:   sees ping == n; g = %globaltimer; gpu_ns = g; fence; pong = n
 *   host:  sees pong == n; t1 = now
 *
 * so g was read between t0 and t1 on the host's clock. What one side writes
 * sits on its own 128-byte line, apart from what the other side writes.
 */
#ifndef EGPU_DEVICE_CLOCK_SYNC_H
#define EGPU_DEVICE_CLOCK_SYNC_H

#include <stdint.h>

/* ping value that ends the kernel */
#define CLOCK_PING_STOP UINT64_MAX

/* state, written by the kernel */
#define CLOCK_STATE_IDLE 0    /* not started yet */
#define CLOCK_STATE_RUNNING 1 /* step_ns is valid; waiting for pings */
#define CLOCK_STATE_DONE 2    /* the kernel no longer touches the mailbox */

/* Globaltimer updates the kernel watches to find the timer's step. */
#define CLOCK_STEP_SAMPLES 8

struct clock_mailbox {
	/* written by the host */
	volatile uint64_t ping;
	uint64_t host_pad[15];
	/* written by the GPU */
	volatile uint64_t pong;
	volatile uint64_t gpu_ns;  /* %globaltimer when it saw ping == pong */
	volatile uint64_t step_ns; /* largest update step of %globaltimer seen */
	volatile uint64_t state;   /* CLOCK_STATE_* */
	uint64_t gpu_pad[12];
};

/* Name of the kernel in the image, and its parameters:
 * (struct clock_mailbox *mb, uint64_t idle_timeout_ns, uint64_t max_rounds) */
#define CLOCK_KERNEL_NAME "egpu_clock_sync_kernel"

#ifndef __CUDACC__
/* The kernel as a fatbin (SASS for common targets and PTX for the rest). */
extern const char clock_kernel_image[];
extern const unsigned clock_kernel_image_len;
#endif

#endif
