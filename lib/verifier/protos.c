/* SPDX-License-Identifier: MIT */
/*
 * Prototypes of the helpers of lib/core/helpers.h. Attach rules: every
 * helper may run at every attach point, except exit_thread, which is
 * refused in memory probes (ending a thread in the middle of the kernel's
 * work). At the entry it ends threads before the kernel body runs (bpftime's
 * atomizer partitions a grid so), and the instrumenter refuses kernels with
 * barriers that exited threads cannot release (lib/ptx/exitsafe.c).
 */
#include "core/core.h"
#include "core/helpers.h"
#include "protos.h"

#define KERNEL_PROBES (ATTACH_BIT(EGPU_ATTACH_ENTRY) | ATTACH_BIT(EGPU_ATTACH_EXIT))
#define NOT_IN_MEM_PROBES (ATTACH_ALL & ~ATTACH_BIT(EGPU_ATTACH_MEM))

static const struct helper_proto gpu_protos[] = {
	{ HELPER_MAP_LOOKUP, RET_MAP_VALUE_OR_NULL, { ARG_MAP, ARG_MAP_KEY },
	  MAPS_KV, ATTACH_ALL, false },
	{ HELPER_MAP_UPDATE, RET_SCALAR,
	  { ARG_MAP, ARG_MAP_KEY, ARG_MAP_VALUE, ARG_SCALAR }, MAPS_KV,
	  ATTACH_ALL, false },
	{ HELPER_MAP_DELETE, RET_SCALAR, { ARG_MAP, ARG_MAP_KEY }, MAPS_KV,
	  ATTACH_ALL, false },
	{ HELPER_KTIME_GET_NS, RET_SCALAR, { 0 }, 0, ATTACH_ALL, false },
	{ HELPER_TRACE_PRINTK, RET_SCALAR,
	  { ARG_MEM, ARG_SIZE, ARG_ANY_OR_UNINIT, ARG_ANY_OR_UNINIT,
	    ARG_ANY_OR_UNINIT }, 0, ATTACH_ALL, false },
	{ HELPER_TRACE_VPRINTK, RET_SCALAR,
	  { ARG_MEM, ARG_SIZE, ARG_MEM, ARG_SIZE }, 0, ATTACH_ALL, false },
	{ HELPER_GET_PID_TGID, RET_SCALAR, { 0 }, 0, ATTACH_ALL, false },
	{ HELPER_PERF_EVENT_OUTPUT, RET_SCALAR,
	  { ARG_ANY_OR_UNINIT, ARG_MAP, ARG_SCALAR, ARG_MEM, ARG_SIZE_OR_ZERO },
	  MAPS_PERF, ATTACH_ALL, false },
	{ HELPER_RINGBUF_OUTPUT, RET_SCALAR,
	  { ARG_MAP, ARG_MEM, ARG_SIZE_OR_ZERO, ARG_SCALAR }, MAPS_RING,
	  ATTACH_ALL, false },
	{ HELPER_RINGBUF_RESERVE, RET_RECORD_OR_NULL,
	  { ARG_MAP, ARG_ALLOC_SIZE, ARG_SCALAR }, MAPS_RING, ATTACH_ALL,
	  false },
	{ HELPER_RINGBUF_SUBMIT, RET_VOID, { ARG_RECORD, ARG_SCALAR }, 0,
	  ATTACH_ALL, false },
	{ HELPER_RINGBUF_DISCARD, RET_VOID, { ARG_RECORD, ARG_SCALAR }, 0,
	  ATTACH_ALL, false },
	{ HELPER_PUTS, RET_SCALAR, { ARG_CONST_STR }, 0, ATTACH_ALL, false },
	{ HELPER_GLOBALTIMER, RET_SCALAR, { 0 }, 0, ATTACH_ALL, false },
	{ HELPER_BLOCK_IDX, RET_SCALAR,
	  { ARG_U64_OUT, ARG_U64_OUT, ARG_U64_OUT }, 0, ATTACH_ALL, false },
	{ HELPER_BLOCK_DIM, RET_SCALAR,
	  { ARG_U64_OUT, ARG_U64_OUT, ARG_U64_OUT }, 0, ATTACH_ALL, false },
	{ HELPER_THREAD_IDX, RET_SCALAR,
	  { ARG_U64_OUT, ARG_U64_OUT, ARG_U64_OUT }, 0, ATTACH_ALL, false },
	{ HELPER_MEMBAR, RET_SCALAR, { 0 }, 0, ATTACH_ALL, false },
	{ HELPER_EXIT_THREAD, RET_SCALAR, { 0 }, 0, NOT_IN_MEM_PROBES, true },
	{ HELPER_GRID_DIM, RET_SCALAR,
	  { ARG_U64_OUT, ARG_U64_OUT, ARG_U64_OUT }, 0, ATTACH_ALL, false },
	{ HELPER_SMID, RET_SCALAR, { 0 }, 0, ATTACH_ALL, false },
	{ HELPER_WARPID, RET_SCALAR, { 0 }, 0, ATTACH_ALL, false },
	{ HELPER_LANEID, RET_SCALAR, { 0 }, 0, ATTACH_ALL, false },
	{ HELPER_ACTIVE_MASK, RET_SCALAR, { 0 }, 0, ATTACH_ALL, false },
	{ HELPER_WARP_ADD, RET_SCALAR, { ARG_SHARED_U64, ARG_SCALAR }, 0,
	  ATTACH_ALL, false },
	{ HELPER_NANOSLEEP, RET_SCALAR, { ARG_SCALAR }, 0, ATTACH_ALL, false },
	{ HELPER_WARP_BALLOT, RET_SCALAR, { ARG_SCALAR }, 0, ATTACH_ALL, false },
	{ HELPER_WARP_MATCH, RET_SCALAR, { ARG_SCALAR }, 0, ATTACH_ALL, false },
	{ HELPER_WARP_SHFL, RET_SCALAR, { ARG_SCALAR, ARG_SCALAR }, 0,
	  ATTACH_ALL, false },
	/* The source lies outside the program's view: the run-time bound
	 * (the ctx's parameter block or accessed bytes) makes it safe. */
	{ HELPER_READ_PARAM, RET_SCALAR,
	  { ARG_CTX, ARG_MEM_OUT, ARG_SIZE, ARG_SCALAR }, 0, KERNEL_PROBES,
	  false },
	{ HELPER_READ_MEM, RET_SCALAR,
	  { ARG_CTX, ARG_MEM_OUT, ARG_SIZE, ARG_SCALAR }, 0,
	  ATTACH_BIT(EGPU_ATTACH_MEM), false },
	{ HELPER_READ_VALUE, RET_SCALAR,
	  { ARG_CTX, ARG_MEM_OUT, ARG_SIZE, ARG_SCALAR }, 0,
	  ATTACH_BIT(EGPU_ATTACH_MEM), false },
	{ HELPER_TRACE_WARP, RET_SCALAR,
	  { ARG_MAP, ARG_SCALAR, ARG_SCALAR, ARG_SCALAR }, MAPS_RING,
	  ATTACH_ALL, false },
};

/* The conformance suite's helper 5 returns its argument. */
static const struct helper_proto conformance_protos[] = {
	{ 5, RET_ARG1, { ARG_SCALAR }, 0, ATTACH_ALL, false },
};

const struct helper_proto *proto_find(int32_t id, int abi)
{
	const struct helper_proto *t = gpu_protos;
	size_t n = ARRAY_SIZE(gpu_protos);

	if (abi == EGPU_HELPERS_CONFORMANCE) {
		t = conformance_protos;
		n = ARRAY_SIZE(conformance_protos);
	}
	for (size_t i = 0; i < n; i++)
		if (t[i].id == id)
			return &t[i];
	return NULL;
}

/* User helpers run anywhere: they cannot change what the kernel does. */
const struct helper_proto *proto_lookup(int32_t id, int abi,
					const struct user_helper *users,
					struct helper_proto *scratch)
{
	static const uint8_t arg_of_kind[] = {
		[USER_ARG_SCALAR] = ARG_SCALAR,
		[USER_ARG_BUF] = ARG_USER_BUF,
		[USER_ARG_CONST_BUF] = ARG_USER_CONST_BUF,
	};
	const struct user_helper *u = NULL;

	if (abi == EGPU_HELPERS_GPU)
		u = user_helper_find(users, id);
	if (!u)
		return proto_find(id, abi);
	*scratch = (struct helper_proto){
		.id = id, .ret = u->ret_void ? RET_VOID : RET_SCALAR,
		.attach = ATTACH_ALL,
	};
	for (unsigned i = 0; i < u->info.nargs; i++)
		scratch->args[i] = arg_of_kind[u->kind[i]];
	return scratch;
}

bool map_in_group(uint32_t type, uint8_t group)
{
	switch (type) {
	case EGPU_MAP_HASH:
	case EGPU_MAP_ARRAY:
	case EGPU_MAP_PERCPU_ARRAY:
	case EGPU_MAP_PERTHREAD_ARRAY:
	case EGPU_MAP_GPU_ARRAY:
	case EGPU_MAP_THREAD_LOCAL:
	case EGPU_MAP_SM_ARRAY:
		return group & MAPS_KV;
	case EGPU_MAP_RINGBUF:
		return group & MAPS_RING;
	case EGPU_MAP_PERF_EVENT_ARRAY:
		return group & MAPS_PERF;
	case EGPU_MAP_GPU_RINGBUF:
		return group & (MAPS_RING | MAPS_PERF);
	default:
		return false;
	}
}
