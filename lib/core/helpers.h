/* SPDX-License-Identifier: MIT */
/*
 * The helper functions a program may call, by number. Numbers follow Linux
 * and bpftime so existing programs run unchanged; new ones start at 512.
 * The verifier adds argument types (lib/verifier), the JIT lowers each one
 * per back end (lib/jit).
 */
#ifndef EGPU_HELPERS_H
#define EGPU_HELPERS_H

#include <stdbool.h>
#include <stdint.h>

enum egpu_helper_id {
	HELPER_MAP_LOOKUP = 1,
	HELPER_MAP_UPDATE = 2,
	HELPER_MAP_DELETE = 3,
	HELPER_KTIME_GET_NS = 5,
	HELPER_TRACE_PRINTK = 6,
	HELPER_GET_PID_TGID = 14,
	HELPER_PERF_EVENT_OUTPUT = 25,
	HELPER_RINGBUF_OUTPUT = 130,
	HELPER_RINGBUF_RESERVE = 131,
	HELPER_RINGBUF_SUBMIT = 132,
	HELPER_RINGBUF_DISCARD = 133,
	HELPER_TRACE_VPRINTK = 177,
	HELPER_PUTS = 501,
	HELPER_GLOBALTIMER = 502,
	HELPER_BLOCK_IDX = 503,
	HELPER_BLOCK_DIM = 504,
	HELPER_THREAD_IDX = 505,
	HELPER_MEMBAR = 506,
	HELPER_EXIT_THREAD = 507,
	HELPER_GRID_DIM = 508,
	HELPER_SMID = 509,
	HELPER_WARPID = 510,
	HELPER_LANEID = 511,
	/* SIMT helpers: cheap warp-level building blocks for probes. */
	HELPER_ACTIVE_MASK = 512,
	HELPER_WARP_ADD = 513,
	HELPER_NANOSLEEP = 514,
	HELPER_WARP_BALLOT = 515,
	HELPER_WARP_MATCH = 516,
	HELPER_WARP_SHFL = 517,
	/* Reading what the probed code sees, bounded at run time. */
	HELPER_READ_PARAM = 518, /* the kernel's parameter bytes */
	HELPER_READ_MEM = 519,   /* the bytes a memory access touches */
	HELPER_READ_VALUE = 520, /* the bytes a store writes */
	/* A warp's access as one compressed ring record. */
	HELPER_TRACE_WARP = 521,
};

/* Longest sleep of one nanosleep call, as PTX's nanosleep: 1 ms. */
#define HELPER_NANOSLEEP_MAX_NS 1000000

struct helper_info {
	int32_t id;
	const char *name;
	uint8_t nargs;
};

/*
 * The helper numbered @id under the given enum egpu_helper_abi, or NULL if
 * no such helper exists there.
 */
const struct helper_info *helper_find(int32_t id, int abi);

/*
 * An application's own helper (egpu_helper_register, lib/api/helper.c):
 * a per-context extension of the table above, numbered in
 * [EGPU_HELPER_USER_MIN, EGPU_HELPER_USER_MAX] (include/egpu.h). A
 * context keeps them in a list that only grows at its head, so the head
 * an object saw at load time stays a valid, unchanging snapshot.
 */
enum user_arg_kind {
	USER_ARG_SCALAR = 1, /* a 64-bit integer */
	USER_ARG_BUF,        /* pointer to size bytes the helper may write */
	USER_ARG_CONST_BUF,  /* pointer to size bytes it only reads */
};

struct user_helper {
	struct helper_info info; /* id, name, nargs */
	bool ret_void;           /* else returns a 64-bit integer */
	uint8_t kind[5];         /* enum user_arg_kind, info.nargs of them */
	uint32_t size[5];        /* bytes of each buffer argument */
	void (*fn)(void);        /* the C function, of that signature */
	void *call;              /* lib/api/helper.c: how to call it by libffi */
	const struct user_helper *next;
};

/* Helper @id among the list @users (may be NULL), or NULL. */
const struct user_helper *user_helper_find(const struct user_helper *users,
					   int32_t id);
/* helper_find(), extended by @users under the GPU helper set. */
const struct helper_info *helper_lookup(int32_t id, int abi,
					const struct user_helper *users);
/* Whether @id lies in the numbers left to applications. */
bool helper_id_is_user(int64_t id);

#endif
