/* SPDX-License-Identifier: MIT */
#include "core.h"
#include "helpers.h"

static const struct helper_info gpu_helpers[] = {
	{ HELPER_MAP_LOOKUP, "map_lookup_elem", 2 },
	{ HELPER_MAP_UPDATE, "map_update_elem", 4 },
	{ HELPER_MAP_DELETE, "map_delete_elem", 2 },
	{ HELPER_KTIME_GET_NS, "ktime_get_ns", 0 },
	{ HELPER_TRACE_PRINTK, "trace_printk", 5 },
	{ HELPER_GET_PID_TGID, "get_current_pid_tgid", 0 },
	{ HELPER_PERF_EVENT_OUTPUT, "perf_event_output", 5 },
	{ HELPER_RINGBUF_OUTPUT, "ringbuf_output", 4 },
	{ HELPER_RINGBUF_RESERVE, "ringbuf_reserve", 3 },
	{ HELPER_RINGBUF_SUBMIT, "ringbuf_submit", 2 },
	{ HELPER_RINGBUF_DISCARD, "ringbuf_discard", 2 },
	{ HELPER_TRACE_VPRINTK, "trace_vprintk", 4 },
	{ HELPER_PUTS, "puts", 1 },
	{ HELPER_GLOBALTIMER, "get_globaltimer", 0 },
	{ HELPER_BLOCK_IDX, "get_block_idx", 3 },
	{ HELPER_BLOCK_DIM, "get_block_dim", 3 },
	{ HELPER_THREAD_IDX, "get_thread_idx", 3 },
	{ HELPER_MEMBAR, "membar", 0 },
	{ HELPER_EXIT_THREAD, "exit_thread", 0 },
	{ HELPER_GRID_DIM, "get_grid_dim", 3 },
	{ HELPER_SMID, "get_sm_id", 0 },
	{ HELPER_WARPID, "get_warp_id", 0 },
	{ HELPER_LANEID, "get_lane_id", 0 },
	{ HELPER_ACTIVE_MASK, "get_active_mask", 0 },
	{ HELPER_WARP_ADD, "warp_add", 2 },
	{ HELPER_NANOSLEEP, "nanosleep", 1 },
	{ HELPER_WARP_BALLOT, "warp_ballot", 1 },
	{ HELPER_WARP_MATCH, "warp_match", 1 },
	{ HELPER_WARP_SHFL, "warp_shfl", 2 },
	{ HELPER_READ_PARAM, "read_param", 4 },
	{ HELPER_READ_MEM, "read_mem", 4 },
	{ HELPER_READ_VALUE, "read_value", 4 },
	{ HELPER_TRACE_WARP, "trace_warp", 4 },
};

/* The conformance suite's "unwind" helper: returns its first argument. */
static const struct helper_info conformance_helpers[] = {
	{ HELPER_KTIME_GET_NS, "unwind", 1 },
};

const struct helper_info *helper_find(int32_t id, int abi)
{
	const struct helper_info *t = gpu_helpers;
	size_t n = ARRAY_SIZE(gpu_helpers);

	if (abi == EGPU_HELPERS_CONFORMANCE) {
		t = conformance_helpers;
		n = ARRAY_SIZE(conformance_helpers);
	}
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
