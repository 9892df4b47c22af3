/* SPDX-License-Identifier: MIT */
/*
 * Event rings: the layout shared by the host (C11, lib/maps/ring*.c), the
 * device runtime (CUDA C, lib/device/ring.cuh) and the CPU back end. Plain C
 * with fixed-width types; docs/events.md explains the protocol.
 *
 * A ring's records live in host memory (page-locked and mapped into the
 * GPU once its object uses the GPU), so the host reads them where they are,
 * without a copy and without a CUDA call:
 *
 *  host memory  ┌───────────────────┐ 0
 *               │ struct ring_ctl    │ consumer position, drop count
 *               ├───────────────────┤ RING_DATA_OFFSET
 *               │ records            │ capacity bytes (a power of two)
 *               ├───────────────────┤
 *               │ tail pad           │ max_record bytes: a record that
 *               └───────────────────┘ runs past the end continues here
 *
 * Producers reserve positions (byte offsets that only grow); a record at
 * position p starts at records + (p & (capacity - 1)) and is contiguous.
 * Each record is a struct ring_hdr and its payload, rounded up to 8 bytes;
 * a RING_BATCH record carries the records of a warp's lanes (struct
 * ring_batch). A header reads zero until the record is published: the
 * producer writes the payload, fences, then stores the header's flags
 * (RING_COMMIT); the consumer zeroes what it consumed before it gives the
 * space back.
 *
 * GPU producers keep their counters in device memory (struct dev_ring),
 * where atomics are fast; only the consumer position crosses to the GPU,
 * read when the ring looks full.
 *
 * A ring may instead keep its records in GPU memory (RING_IN_DEVICE_MEMORY),
 * split into shards, one per SM, each a ring of its own with its
 * own counters (below): the host copies records out (lib/maps/ring_dev.c),
 * zeroes what it consumed there and writes each shard's consumer position
 * back with small copies.
 */
#ifndef EGPU_MAPS_RING_LAYOUT_H
#define EGPU_MAPS_RING_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define RING_ASSERT(c, msg) static_assert(c, msg)
#else
#define RING_ASSERT(c, msg) _Static_assert(c, msg)
#endif
#ifdef __CUDACC__
#define RING_INLINE static inline __host__ __device__
#else
#define RING_INLINE static inline
#endif

/* struct ring_hdr.flags */
#define RING_COMMIT 1u  /* the record is complete */
#define RING_DISCARD 2u /* ... and the consumer skips it */
#define RING_BATCH 4u   /* the payload is a struct ring_batch */
/*
 * Before publishing only, without RING_COMMIT (so still unpublished): a
 * record reserved in a ring in GPU memory, for bpf_ringbuf_submit, which
 * is not told its ring, to pick its fence (lib/device/ring.cuh).
 */
#define RING_RESERVED_LOCAL 8u
/*
 * Published by a producer that also added the record's bytes to its
 * shard's published-bytes word (ring_shard_done) after writing them and
 * before the header: a ring in GPU memory is then copied out once when
 * that word shows every record before the producer position written
 * (lib/maps/ring_dev.c).
 * Records without it are counted by the consumer instead, as it takes
 * them. (RING_SPAN is 16u, lib/maps/span_layout.h.)
 */
#define RING_COUNTED 32u

/* A record's header; 8 bytes, 8-aligned, written with one store at commit. */
struct ring_hdr {
	uint32_t len;   /* payload bytes */
	uint32_t flags; /* 0 (or RING_RESERVED_LOCAL) until published, then
			 * RING_COMMIT [| DISCARD | BATCH] */
};

#define RING_HDR_SIZE 8u

/*
 * The records a warp's lanes output at once, all of one size, as one ring
 * record (one reservation, one fence). Stored column-major, so that each
 * store instruction of the warp writes consecutive words (whole lines over
 * PCIe, not 8-byte pieces): word k of the i-th record is words[k * count + i].
 * The consumer hands each record to its callback as if it came alone.
 */
struct ring_batch {
	uint32_t count;   /* records, 1 to RING_BATCH_MAX */
	uint32_t len;     /* payload bytes of each */
	uint64_t words[]; /* count * ceil(len / 8) words */
};

#define RING_BATCH_MAX 32u
/* Ring bytes of a batch of @count records of @len bytes: headers and words. */
RING_INLINE uint64_t ring_batch_size(uint32_t count, uint64_t len)
{
	return RING_HDR_SIZE + sizeof(struct ring_batch) +
	       (uint64_t)count * ((len + 7u) & ~(uint64_t)7u);
}
/* Ring sizes: powers of two in [RING_MIN_BYTES, RING_MAX_BYTES]. */
#define RING_MIN_BYTES 64u
#define RING_MAX_BYTES (1u << 30)
/* A record (header and payload) is at most this big, and at most the ring. */
#define RING_RECORD_MAX (64u * 1024)
/* Rings whose map gives no byte size: PERF_EVENT_ARRAY and 1527 maps. */
#define RING_DEFAULT_BYTES (8u << 20)
/* Where the records start in the host memory of a ring. */
#define RING_DATA_OFFSET 4096u

/*
 * The ring's first page, in host memory. Each word has its own 128-byte
 * line: the host writes cons, GPU atomics add to drops.
 */
struct ring_ctl {
	uint64_t cons;      /* consumer position; written by the host only */
	uint64_t pad0[15];
	uint64_t drops;     /* records refused because the ring was full */
	uint64_t pad1[15];
};

/*
 * A ring's GPU side, in device memory: the data of its map (the map
 * handle's dev_map_desc.data) or the context's print ring.
 *
 * A ring in GPU memory (RING_IN_DEVICE_MEMORY) is @shards rings of
 * (mask + 1) bytes each; a producer uses shard ring_shard_index(%smid), so
 * a thread's records stay in order. Its first three words are unused then;
 * ctl is the address of the shard lines, each shard's counters on lines
 * of their own (ring_shard_*() below):
 *
 *   ctl:  shards producer lines  struct ring_counters (GPU atomics)
 *         shards consumer lines  its consumer position (host writes)
 *         shards drop lines      its drop count (GPU atomics)
 *   data: shard 0's records, tail pad; shard 1's ... (stride bytes apart)
 */
struct dev_ring {
	uint64_t reserved;  /* bytes promised to producers; see ring.cuh */
	uint64_t prod;      /* next position handed out */
	uint64_t cons_seen; /* the largest consumer position read from ctl */
	uint64_t mask;      /* capacity (of a shard) - 1 */
	uint64_t data;      /* device address of the records (of shard 0) */
	uint64_t ctl;       /* device address of the struct ring_ctl, or of
			     * the shard lines */
	uint32_t max_record; /* largest header + payload, a multiple of 8 */
	uint32_t type;      /* the map type, or 0 for the print ring */
	uint32_t flags;     /* RING_IN_DEVICE_MEMORY, RING_LOSSLESS */
	uint32_t shards;    /* 1 for rings in host memory */
	uint64_t stride;    /* bytes from one shard's records to the next's */
	uint64_t wait_ns;   /* RING_LOSSLESS: the longest a producer waits */
	uint64_t stall;     /* RING_LOSSLESS, in host memory: see ring_stalled */
	uint64_t pad[5];
};

/* A producer's counters: the start of a struct dev_ring, or a shard line. */
struct ring_counters {
	uint64_t reserved;
	uint64_t prod;
	uint64_t cons_seen;
};

/*
 * Shards of rings in GPU memory hold capacity / a power of two of at most
 * RING_SHARDS_MAX, and no less than RING_SHARD_MIN_BYTES, so that a shard
 * holds the largest record a ring of that size holds whole (max_record
 * does not change). lib/maps/ring_dev.c picks how many for a GPU.
 */
#define RING_SHARDS_MAX 128u
#define RING_SHARD_MIN_BYTES RING_RECORD_MAX
#define RING_LINE 128u

/*
 * The most shards a ring of @cap bytes is split into before the GPU is
 * known, a power of two: also the least a shard holds, cap / this.
 */
RING_INLINE uint32_t ring_shards_for(uint64_t cap)
{
	uint64_t n = cap / RING_SHARD_MIN_BYTES;

	return n < 1 ? 1 : n > RING_SHARDS_MAX ? RING_SHARDS_MAX : (uint32_t)n;
}

/* Bytes of the shard lines of @shards shards: whole pages. */
RING_INLINE uint64_t ring_shard_lines_len(uint32_t shards)
{
	uint64_t n = 3ull * shards * RING_LINE;

	return (n + RING_DATA_OFFSET - 1) / RING_DATA_OFFSET * RING_DATA_OFFSET;
}

/*
 * The shard of the threads of SM @smid: their own, or shared if too few.
 * Fewer shards than SMs are a power of two (ring_dev_fit_shards), where a
 * mask is a remainder without a division; any other count still maps
 * every SM into range.
 */
RING_INLINE uint32_t ring_shard_index(const struct dev_ring *r, uint32_t smid)
{
	return smid < r->shards ? smid : smid & (r->shards - 1);
}

/* Addresses of shard @i's counters, consumer position, drops and records. */
RING_INLINE uint64_t ring_shard_counters(const struct dev_ring *r, uint32_t i)
{
	return r->ctl + (uint64_t)i * RING_LINE;
}

RING_INLINE uint64_t ring_shard_cons(const struct dev_ring *r, uint32_t i)
{
	return r->ctl + (uint64_t)(r->shards + i) * RING_LINE;
}

RING_INLINE uint64_t ring_shard_drops(const struct dev_ring *r, uint32_t i)
{
	return r->ctl + (uint64_t)(2 * r->shards + i) * RING_LINE;
}

RING_INLINE uint64_t ring_shard_data(const struct dev_ring *r, uint32_t i)
{
	return r->data + (uint64_t)i * r->stride;
}

/*
 * struct dev_ring.flags: records and ctl are in GPU memory (map flag
 * EGPU_F_RING_DEVICE), which the host reads with the copy engine through
 * the GPU's L2, so publishing needs a GPU-scope fence only.
 */
#define RING_IN_DEVICE_MEMORY 1u
/*
 * struct dev_ring.flags: a producer that finds no room waits for the host
 * to drain, up to wait_ns (map flag EGPU_F_RING_LOSSLESS; docs/events.md
 * "Lossless rings"), then drops and counts as any ring does.
 */
#define RING_LOSSLESS 2u
#define RING_DEFAULT_WAIT_NS 1000000000ull

/*
 * A lossless ring's stall word, one per shard (a ring in host memory: its
 * descriptor's stall; a shard: the word after its counters): a producer
 * whose wait ran out leaves consumer position + 1 there, and until the
 * consumer moves on, producers that find no room drop without waiting,
 * so a consumer that stopped costs one bounded wait, not one per record.
 */
RING_INLINE uint64_t ring_shard_stall(const struct dev_ring *r, uint32_t i)
{
	return ring_shard_counters(r, i) + 3 * sizeof(uint64_t);
}

/*
 * Shard @i's published-bytes word (rings in GPU memory: the word after
 * its stall word): the bytes of every RING_COUNTED record published
 * there, added after its bytes (the publish's fence) and before its
 * header.
 */
RING_INLINE uint64_t ring_shard_done(const struct dev_ring *r, uint32_t i)
{
	return ring_shard_counters(r, i) + 4 * sizeof(uint64_t);
}

/* Whether a producer may wait at consumer position @cons (@stall read). */
RING_INLINE int ring_may_wait(uint64_t stall, uint64_t cons)
{
	return stall != cons + 1;
}

/* Bytes a record of @len payload bytes takes: header, payload, padding. */
RING_INLINE uint64_t ring_record_size(uint64_t len)
{
	return (RING_HDR_SIZE + len + 7u) & ~(uint64_t)7u;
}

/*
 * A print record: what bpf_trace_printk, bpf_trace_vprintk and bpf_puts
 * leave in the context's print ring for the host to format.
 */
enum print_kind {
	PRINT_PRINTK = 1, /* fmt is a format of fmt_size bytes; args follow */
	PRINT_PUTS = 2,   /* fmt is a NUL-terminated string; no args */
};

/*
 * A flag of PRINT_PRINTK: the format was on the printing thread's stack,
 * where the host cannot read it, so its fmt_size bytes (NUL-terminated)
 * follow args[], padded to 8. A stack holds at most PRINT_INLINE_MAX
 * bytes (eBPF's 512), so none is ever cut.
 */
#define PRINT_FMT_INLINE 0x100u
#define PRINT_INLINE_MAX 512u

/* Linux's limit on bpf_trace_vprintk arguments (MAX_BPRINTF_VARARGS). */
#define PRINT_MAX_ARGS 12u

struct print_rec {
	uint64_t fmt;       /* device address of the format or string */
	uint32_t fmt_size;  /* PRINT_PRINTK, inline: bytes at fmt, NUL included */
	uint16_t kind;      /* enum print_kind, PRINT_FMT_INLINE */
	uint16_t nargs;     /* 64-bit arguments in args[] */
	uint32_t block[3];  /* blockIdx of the printing thread */
	uint32_t thread[3]; /* threadIdx */
	/* the kernel's id (egpu_kernel_info()), PRINT_NO_KERNEL where the
	 * printing code cannot tell: direct runs, subprograms, memory
	 * probes of a .func several kernels call */
	uint32_t kernel;
	uint32_t reserved;
	uint64_t args[];
};
#define PRINT_NO_KERNEL 0xffffffffu

/*
 * A user helper called on the GPU (lib/device/call.cuh): one record in
 * the context's call ring, dispatched on the host (lib/api/helper.c).
 * args[] holds the scalar arguments (0 for buffers), then each buffer
 * argument's bytes follow in argument order, each padded to 8 bytes.
 * The call's shape reaches the device as one word, its layout: the
 * argument count, and each argument's buffer size (0: a scalar).
 */
struct call_rec {
	uint32_t id;    /* helper number */
	uint32_t nargs; /* 64-bit words in args[] */
	uint64_t args[];
};

#define CALL_MAX_ARGS 5u
#define CALL_SIZE_BITS 12u /* a buffer size of the layout word */
#define CALL_LAYOUT_NARGS(layout) ((uint32_t)((layout) & 0xf))
#define CALL_LAYOUT_SIZE(layout, i)                                           \
	((uint32_t)((layout) >> (4 + CALL_SIZE_BITS * (i))) &                 \
	 ((1u << CALL_SIZE_BITS) - 1))
#define CALL_LAYOUT_ARG(i, size)                                              \
	((uint64_t)(size) << (4 + CALL_SIZE_BITS * (i)))
/* Bytes a buffer of @size bytes takes in a record. */
#define CALL_BUF_BYTES(size) (((size) + 7u) & ~7u)

RING_ASSERT(sizeof(struct ring_hdr) == RING_HDR_SIZE, "header is 8 bytes");
RING_ASSERT(sizeof(struct ring_ctl) == 256, "ctl is two 128-byte lines");
RING_ASSERT(sizeof(struct ring_ctl) <= RING_DATA_OFFSET, "ctl before data");
RING_ASSERT(sizeof(struct dev_ring) == 128, "dev_ring is 128 bytes");
RING_ASSERT(offsetof(struct dev_ring, cons_seen) ==
	    offsetof(struct ring_counters, cons_seen), "dev_ring's counters");
RING_ASSERT(sizeof(struct print_rec) == 48, "print record header");
RING_ASSERT(sizeof(struct call_rec) == 8, "call record header");
RING_ASSERT(sizeof(struct ring_batch) == 8, "batch header");
RING_ASSERT(RING_RECORD_MAX % 8 == 0, "records are 8-aligned");

#endif
