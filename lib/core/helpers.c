/* SPDX-License-Identifier: MIT */
/* The helper table (helpers.h) and its lookup, extended by user helpers. */
#include "core.h"
#include "helpers.h"
#include "map_types.h"

/*
 * Attach rules: every helper may run at every GPU attach point, except
 * exit_thread, which is refused in memory probes (ending a thread in the
 * middle of the kernel's work), and the readers of what the probed code
 * sees, which exist only where it is there to read. At the entry
 * exit_thread ends threads before the kernel body runs (bpftime's
 * atomizer partitions a grid so), and the instrumenter refuses kernels
 * with barriers that exited threads cannot release (lib/ptx/exitsafe.c).
 * Host probes (uprobes, on the CPU back end, in the application's process)
 * get what means something there: maps, clocks, the process's id,
 * printing, and reading the application's memory (probe_read_user, theirs
 * only); the GPU's thread, warp and ring helpers are refused there.
 */
#define ANYWHERE ATTACH_ALL
#define GPU_ONLY ATTACH_GPU
#define KERNEL_PROBES (ATTACH_BIT(EGPU_ATTACH_ENTRY) | ATTACH_BIT(EGPU_ATTACH_EXIT))
#define NOT_IN_MEM_PROBES (ATTACH_GPU & ~ATTACH_BIT(EGPU_ATTACH_MEM))
#define MEM_PROBES ATTACH_BIT(EGPU_ATTACH_MEM)

/* The arguments, and so their count. */
#define ARGS(...) \
	.args = { __VA_ARGS__ }, .nargs = sizeof((uint8_t[]){ __VA_ARGS__ })
#define XYZ ARGS(ARG_U64_OUT, ARG_U64_OUT, ARG_U64_OUT)
#define WINDOW ARGS(ARG_CTX, ARG_MEM_OUT, ARG_SIZE, ARG_SCALAR)

static const struct helper_info gpu_helpers[] = {
	{ HELPER_MAP_LOOKUP, "map_lookup_elem", ARGS(ARG_MAP, ARG_MAP_KEY),
	  .ret = RET_MAP_VALUE_OR_NULL, .maps = MAP_T_KEYED,
	  .attach = ANYWHERE, .lower = LOWER_MAP_LOOKUP },
	{ HELPER_MAP_UPDATE, "map_update_elem",
	  ARGS(ARG_MAP, ARG_MAP_KEY, ARG_MAP_VALUE, ARG_SCALAR),
	  .maps = MAP_T_KEYED, .attach = ANYWHERE },
	{ HELPER_MAP_DELETE, "map_delete_elem", ARGS(ARG_MAP, ARG_MAP_KEY),
	  .maps = MAP_T_KEYED, .attach = ANYWHERE },
	{ HELPER_KTIME_GET_NS, "ktime_get_ns", .attach = ANYWHERE },
	{ HELPER_TRACE_PRINTK, "trace_printk",
	  ARGS(ARG_MEM, ARG_SIZE, ARG_ANY_OR_UNINIT, ARG_ANY_OR_UNINIT,
	       ARG_ANY_OR_UNINIT),
	  .attach = ANYWHERE, .flags = HELPER_PRINTS },
	{ HELPER_GET_PID_TGID, "get_current_pid_tgid", .attach = ANYWHERE },
	{ HELPER_PROBE_READ_USER, "probe_read_user",
	  ARGS(ARG_MEM_OUT, ARG_SIZE, ARG_SCALAR), .attach = ATTACH_HOST },
	{ HELPER_PERF_EVENT_OUTPUT, "perf_event_output",
	  ARGS(ARG_ANY_OR_UNINIT, ARG_MAP, ARG_SCALAR, ARG_MEM,
	       ARG_SIZE_OR_ZERO),
	  .maps = MAP_T_PERF_OUT, .attach = GPU_ONLY },
	{ HELPER_RINGBUF_OUTPUT, "ringbuf_output",
	  ARGS(ARG_MAP, ARG_MEM, ARG_SIZE_OR_ZERO, ARG_SCALAR),
	  .maps = MAP_T_RINGBUF_OUT, .attach = GPU_ONLY },
	{ HELPER_RINGBUF_RESERVE, "ringbuf_reserve",
	  ARGS(ARG_MAP, ARG_ALLOC_SIZE, ARG_SCALAR), .ret = RET_RECORD_OR_NULL,
	  .maps = MAP_T_RINGBUF_OUT, .attach = GPU_ONLY },
	{ HELPER_RINGBUF_SUBMIT, "ringbuf_submit", ARGS(ARG_RECORD, ARG_SCALAR),
	  .ret = RET_VOID, .attach = GPU_ONLY },
	{ HELPER_RINGBUF_DISCARD, "ringbuf_discard",
	  ARGS(ARG_RECORD, ARG_SCALAR), .ret = RET_VOID, .attach = GPU_ONLY },
	{ HELPER_TRACE_VPRINTK, "trace_vprintk",
	  ARGS(ARG_MEM, ARG_SIZE, ARG_MEM, ARG_SIZE), .attach = ANYWHERE,
	  .flags = HELPER_PRINTS },
	{ HELPER_PUTS, "puts", ARGS(ARG_CONST_STR), .attach = ANYWHERE,
	  .flags = HELPER_PRINTS },
	{ HELPER_GLOBALTIMER, "get_globaltimer", .attach = ANYWHERE },
	{ HELPER_BLOCK_IDX, "get_block_idx", XYZ, .attach = GPU_ONLY },
	{ HELPER_BLOCK_DIM, "get_block_dim", XYZ, .attach = GPU_ONLY },
	{ HELPER_THREAD_IDX, "get_thread_idx", XYZ, .attach = GPU_ONLY },
	{ HELPER_MEMBAR, "membar", .attach = GPU_ONLY },
	{ HELPER_EXIT_THREAD, "exit_thread", .attach = NOT_IN_MEM_PROBES,
	  .flags = HELPER_ENDS_THREAD },
	{ HELPER_GRID_DIM, "get_grid_dim", XYZ, .attach = GPU_ONLY },
	{ HELPER_SMID, "get_sm_id", .attach = GPU_ONLY },
	{ HELPER_WARPID, "get_warp_id", .attach = GPU_ONLY },
	{ HELPER_LANEID, "get_lane_id", .attach = GPU_ONLY },
	{ HELPER_ACTIVE_MASK, "get_active_mask", .attach = GPU_ONLY },
	{ HELPER_WARP_ADD, "warp_add", ARGS(ARG_SHARED_U64, ARG_SCALAR),
	  .attach = GPU_ONLY },
	{ HELPER_NANOSLEEP, "nanosleep", ARGS(ARG_SCALAR), .attach = GPU_ONLY },
	{ HELPER_WARP_BALLOT, "warp_ballot", ARGS(ARG_SCALAR),
	  .attach = GPU_ONLY },
	{ HELPER_WARP_MATCH, "warp_match", ARGS(ARG_SCALAR), .attach = GPU_ONLY },
	{ HELPER_WARP_SHFL, "warp_shfl", ARGS(ARG_SCALAR, ARG_SCALAR),
	  .attach = GPU_ONLY },
	/* The source lies outside the program's view: the run-time bound
	 * (the ctx's parameter block or accessed bytes) makes it safe. */
	{ HELPER_READ_PARAM, "read_param", WINDOW, .attach = KERNEL_PROBES,
	  .lower = LOWER_READ_WINDOW },
	{ HELPER_READ_MEM, "read_mem", WINDOW, .attach = MEM_PROBES,
	  .lower = LOWER_READ_WINDOW },
	{ HELPER_READ_VALUE, "read_value", WINDOW, .attach = MEM_PROBES,
	  .lower = LOWER_READ_WINDOW },
	{ HELPER_TRACE_WARP, "trace_warp",
	  ARGS(ARG_MAP, ARG_SCALAR, ARG_SCALAR, ARG_SCALAR),
	  .maps = MAP_T_RINGBUF_OUT, .attach = GPU_ONLY },
	{ HELPER_TRACE_WARP_BATCH, "trace_warp_batch",
	  ARGS(ARG_MAP, ARG_SCALAR, ARG_SCALAR, ARG_SCALAR, ARG_SCALAR),
	  .maps = MAP_T_RINGBUF_OUT, .attach = GPU_ONLY },
	{ HELPER_TRACE_FLUSH, "trace_flush", ARGS(ARG_MAP, ARG_SCALAR),
	  .maps = MAP_T_RINGBUF_OUT, .attach = GPU_ONLY },
	{ HELPER_TRACE_SPAN, "trace_span",
	  ARGS(ARG_MAP, ARG_SCALAR, ARG_SCALAR, ARG_SCALAR),
	  .maps = MAP_T_RINGBUF_OUT, .attach = GPU_ONLY },
	{ HELPER_TRACE_SPAN_FLUSH, "trace_span_flush", ARGS(ARG_MAP, ARG_SCALAR),
	  .maps = MAP_T_RINGBUF_OUT, .attach = GPU_ONLY },
};

/* The conformance suite's "unwind" helper: returns its first argument. */
static const struct helper_info conformance_helpers[] = {
	{ HELPER_KTIME_GET_NS, "unwind", ARGS(ARG_SCALAR), .ret = RET_ARG1,
	  .attach = ANYWHERE, .lower = LOWER_UNWIND },
};

const struct helper_info *helper_table(int abi, size_t *cnt)
{
	if (abi == EGPU_HELPERS_CONFORMANCE) {
		*cnt = ARRAY_SIZE(conformance_helpers);
		return conformance_helpers;
	}
	*cnt = ARRAY_SIZE(gpu_helpers);
	return gpu_helpers;
}

const struct helper_info *helper_find(int32_t id, int abi)
{
	size_t n;
	const struct helper_info *t = helper_table(abi, &n);

	for (size_t i = 0; i < n; i++)
		if (t[i].id == id)
			return &t[i];
	return NULL;
}

const struct user_helper *user_helper_find(const struct user_helper *users,
					   int32_t id)
{
	for (; users; users = users->next)
		if (users->info.id == id)
			return users;
	return NULL;
}

const struct helper_info *helper_lookup(int32_t id, int abi,
					const struct user_helper *users)
{
	const struct user_helper *u = NULL;

	if (abi == EGPU_HELPERS_GPU)
		u = user_helper_find(users, id);
	return u ? &u->info : helper_find(id, abi);
}

bool helper_id_is_user(int64_t id)
{
	return id >= EGPU_HELPER_USER_MIN && id <= EGPU_HELPER_USER_MAX;
}
