/* SPDX-License-Identifier: MIT */
/*
 * A lossless span trace kept in host memory as the ring delivers it (whole
 * chunks, or spans one by one, copied in the ring's own record format),
 * and checked afterwards address by address against the accesses its
 * kernel must make: every lane access once where it should be, none
 * anywhere else (bench_mem's lossless rows).
 */
#ifndef EGPU_BENCH_TRACE_KEEP_H
#define EGPU_BENCH_TRACE_KEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trace_keep {
	uint8_t *buf;
	size_t cap;
	size_t used;   /* bytes kept, reserved atomically by the consumers */
	bool overflow; /* a delivery found no room: the check fails */
};

/* An array the kernel accesses: each of its @elems elements of @size
 * bytes at @base accessed @times times, all of kind @kind. */
struct trace_expect {
	uint64_t base;
	uint64_t elems;
	uint32_t size;
	uint16_t kind;
	uint16_t times;
};

#define TRACE_EXPECT_MAX 4

int trace_keep_init(struct trace_keep *k, size_t cap);
void trace_keep_free(struct trace_keep *k);
/* Forget what was kept (no consumer may be delivering meanwhile). */
void trace_keep_reset(struct trace_keep *k);
/* Keep a chunk: ring records back to back, as egpu_ringbuf_opts.chunk_fn
 * gets them. Thread-safe. */
void trace_keep_chunk(struct trace_keep *k, const void *data, size_t size);
/* Keep one span record's payload, as a sample callback gets it. */
void trace_keep_span(struct trace_keep *k, const void *data, size_t size);
/*
 * Decode every span kept and count each lane access against @ex (@n
 * arrays): returns the lane accesses checked (their warp records in
 * *@records) when each element of each array was accessed exactly its
 * times, with its size and kind, and nothing else; else 0 with the first
 * difference in @why.
 */
uint64_t trace_keep_check(const struct trace_keep *k,
			  const struct trace_expect *ex, size_t n,
			  uint64_t *records, char *why, size_t why_len);

#endif
