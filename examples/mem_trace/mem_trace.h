/* SPDX-License-Identifier: MIT */
/*
 * What mem_trace's probes and its host program share: the per-site
 * counters of the counting probe, the warp-level records of the tracing
 * probe and the per-thread records of the values probe. The probes
 * include <egpu/bpf_helpers.h> first, for the __u64 family of types.
 */
#ifndef MEM_TRACE_H
#define MEM_TRACE_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define MT_MAX_SITES 64
/*
 * Counting: each site's counters are spread over slots, one per SM and
 * warp slot mod 8 (mt_slot_of), each in its own 32-byte sector, so that
 * warps adding at once rarely wait on one address.
 */
#define MT_SLOTS 1024
#define MT_WARP 32

struct mt_slot {
	__u64 accesses; /* lanes that accessed */
	__u64 pad[3];
};

/* counts[site] */
struct mt_site_counts {
	struct mt_slot slot[MT_SLOTS];
};

#define mt_slot_of(smid, warpid) (((smid) * 8 + ((warpid) & 7)) & (MT_SLOTS - 1))

/*
 * One warp-level access: the lanes of @mask running the instruction at
 * @site together. When @affine, lane i accessed base + (i - leader) * size
 * (leader: the lowest lane of @mask) and the record ends here; otherwise
 * struct mt_warp_addrs follows with every lane's address.
 */
struct mt_warp_access {
	__u64 ns;   /* %globaltimer when the warp accessed */
	__u64 base; /* address of the leader's access */
	__u32 site; /* egpu_report.mem_sites[site] */
	__u32 warp; /* linear block index * warps per block + warp in block */
	__u32 mask;
	__u32 size; /* bytes per lane */
	__u16 kind; /* EGPU_MEM_* */
	__u16 affine;
	__u32 reserved;
};

struct mt_warp_addrs {
	struct mt_warp_access head;
	__u64 addr[MT_WARP]; /* lane i's address; lanes outside mask: 0 */
};

/*
 * Values mode (mem_trace_values.bpf.c): one thread's 4- or 8-byte global
 * access and the bytes it moves, little-endian, zero-extended.
 */
struct mt_value {
	__u64 addr;
	__u64 before; /* at addr before the access: a load's value; the
		       * bytes a store overwrites (bpf_egpu_read_mem) */
	__u64 stored; /* stores: the value written (bpf_egpu_read_value) */
	__u32 site;
	__u32 thread; /* blockIdx.x * blockDim.x + threadIdx.x */
	__u32 size;
	__u16 kind;   /* EGPU_MEM_LOAD or EGPU_MEM_STORE */
	__u16 reserved;
};

#endif
