/* SPDX-License-Identifier: MIT */
/*
 * The helper functions a program may call: one table (helpers.c) that says,
 * per helper, its number, name, prototype (what each argument register must
 * hold, what r0 holds after), the attach points that may call it and how
 * the JIT lowers it. The loader, verifier, JIT and API read it; the back
 * ends (lib/jit) add each helper's code. Numbers follow Linux and bpftime
 * so existing programs run unchanged; new ones start at 512.
 */
#ifndef EGPU_HELPERS_H
#define EGPU_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egpu.h"

enum egpu_helper_id {
	HELPER_MAP_LOOKUP = 1,
	HELPER_MAP_UPDATE = 2,
	HELPER_MAP_DELETE = 3,
	HELPER_KTIME_GET_NS = 5,
	HELPER_TRACE_PRINTK = 6,
	HELPER_GET_PID_TGID = 14,
	HELPER_PROBE_READ_USER = 112, /* host probes: the application's memory */
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
	/* ... placed in the lane's span of its shard (state: a thread-local). */
	HELPER_TRACE_WARP_BATCH = 522,
	HELPER_TRACE_FLUSH = 523, /* the span's rest published as a discard */
	/* Compact records in a span the leading lane owns, published once. */
	HELPER_TRACE_SPAN = 524,
	HELPER_TRACE_SPAN_FLUSH = 525, /* the lane's span published */
};

/* Longest sleep of one nanosleep call, as PTX's nanosleep: 1 ms. */
#define HELPER_NANOSLEEP_MAX_NS 1000000

/* What an argument register must hold at the call. */
enum helper_arg {
	ARG_NONE,          /* not an argument */
	ARG_SCALAR,        /* an initialised scalar */
	ARG_ANY_OR_UNINIT, /* anything: printed as a number, or ignored */
	ARG_MAP,           /* a map handle of a type with the helper's maps trait */
	ARG_MAP_KEY,       /* points to key_size readable bytes */
	ARG_MAP_VALUE,     /* points to value_size readable bytes */
	ARG_MEM,           /* points to readable bytes; next arg the size */
	ARG_MEM_OUT,       /* points to writable bytes; next arg the size */
	ARG_SIZE,          /* size of the previous argument, > 0 */
	ARG_SIZE_OR_ZERO,  /* the same, may be 0 */
	ARG_ALLOC_SIZE,    /* a constant > 0 */
	ARG_U64_OUT,       /* points to 8 writable bytes, 8-aligned */
	ARG_RECORD,        /* a non-NULL ring buffer record, its start */
	ARG_CTX,           /* the context pointer, unmoved */
	ARG_CONST_STR,     /* a NUL-terminated string in read-only data */
	ARG_SHARED_U64,    /* 8 writable, 8-aligned bytes of a map value */
	ARG_USER_BUF,      /* user helper: its size[i] initialised, writable
			      bytes of the stack or a map value */
	ARG_USER_CONST_BUF, /* the same, only read */
};

/* What r0 holds after the call. */
enum helper_ret {
	RET_SCALAR,
	RET_VOID,              /* r0 is not initialised after the call */
	RET_MAP_VALUE_OR_NULL, /* value of the map in the ARG_MAP argument */
	RET_RECORD_OR_NULL,    /* record of ARG_ALLOC_SIZE bytes, to release */
	RET_ARG1,              /* returns its first argument */
};

/* How the JIT lowers a call (lib/jit/lift_helper.c). */
enum helper_lower {
	LOWER_BACKEND,     /* the back end's: inline code or a runtime call */
	LOWER_MAP_LOOKUP,  /* array maps inline, other maps the back end's */
	LOWER_READ_WINDOW, /* a bounded copy from the ctx's window, shared */
	LOWER_USER,        /* a user helper: the back end's user_helper */
	LOWER_UNWIND,      /* the conformance suite's: 0 ends the program */
};

/* struct helper_info.flags */
enum helper_flag {
	HELPER_ENDS_THREAD = 1 << 0, /* no reservation may be outstanding */
	HELPER_PRINTS = 1 << 1,      /* writes the context's print ring */
};

#define ATTACH_BIT(at) (1u << (at))
#define ATTACH_ALL 0x3fu
/* Host probes (uprobes of egpu attach), run on the CPU back end. */
#define ATTACH_HOST (ATTACH_BIT(EGPU_ATTACH_UPROBE) | \
		     ATTACH_BIT(EGPU_ATTACH_URETPROBE))
/* Direct runs and the GPU's attach points. */
#define ATTACH_GPU (ATTACH_ALL & ~ATTACH_HOST)

/* Whether programs at @at run on the host, for an application's calls. */
static inline bool attach_is_host(int at)
{
	return at == EGPU_ATTACH_UPROBE || at == EGPU_ATTACH_URETPROBE;
}

struct helper_info {
	int32_t id;
	const char *name;
	uint8_t nargs;
	uint8_t args[5];    /* enum helper_arg, nargs of them */
	uint8_t ret;        /* enum helper_ret */
	uint8_t maps;       /* enum map_trait an ARG_MAP's type must have */
	uint8_t attach;     /* ATTACH_BIT of each attach point that may call */
	uint8_t lower;      /* enum helper_lower */
	uint8_t flags;      /* enum helper_flag */
};

/* Every helper of the enum egpu_helper_abi @abi: @cnt of them. */
const struct helper_info *helper_table(int abi, size_t *cnt);
/*
 * The helper numbered @id under the given enum egpu_helper_abi, or NULL if
 * no such helper exists there.
 */
const struct helper_info *helper_find(int32_t id, int abi);

/*
 * An application's own helper (egpu_helper_register, lib/api/helper.c):
 * a per-context extension of the table, numbered in
 * [EGPU_HELPER_USER_MIN, EGPU_HELPER_USER_MAX] (include/egpu.h). Its info
 * is a prototype like the table's: scalars are ARG_SCALAR, buffers
 * ARG_USER_BUF or ARG_USER_CONST_BUF of size[i] bytes; it returns
 * RET_SCALAR or RET_VOID and may run at every attach point (it cannot
 * change what the kernel does). A context keeps them in a list that only
 * grows at its head, so the head an object saw at load time stays a
 * valid, unchanging snapshot.
 */
struct user_helper {
	struct helper_info info; /* lower LOWER_USER */
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
