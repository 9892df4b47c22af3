/* SPDX-License-Identifier: MIT */
/*
 * Helper prototypes: what each argument register must hold, what r0 holds
 * after the call, and at which attach points the helper may be called.
 */
#ifndef EGPU_PROTOS_H
#define EGPU_PROTOS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/map_types.h"

enum arg_type {
	ARG_NONE,          /* not an argument */
	ARG_SCALAR,        /* an initialised scalar */
	ARG_ANY_OR_UNINIT, /* anything: printed as a number, or ignored */
	ARG_MAP,           /* a map handle of one of proto->maps */
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

enum ret_type {
	RET_SCALAR,
	RET_VOID,              /* r0 is not initialised after the call */
	RET_MAP_VALUE_OR_NULL, /* value of the map in the ARG_MAP argument */
	RET_RECORD_OR_NULL,    /* record of ARG_ALLOC_SIZE bytes, to release */
	RET_ARG1,              /* returns its first argument */
};

/* Map types an ARG_MAP accepts. */
enum map_group {
	MAPS_KV = 1,   /* lookup, update, delete */
	MAPS_RING = 2, /* ringbuf_reserve/output */
	MAPS_PERF = 4, /* perf_event_output */
};

#define ATTACH_BIT(at) (1u << (at))
#define ATTACH_ALL 0xfu

struct helper_proto {
	int32_t id;
	enum ret_type ret;
	uint8_t args[5];
	uint8_t maps;
	uint8_t attach;     /* ATTACH_BIT of each allowed attach point */
	bool ends_thread;   /* no reservation may be outstanding */
};

const struct helper_proto *proto_find(int32_t id, int abi);
struct user_helper;
/*
 * proto_find(), extended by the user helpers @users (lib/core/helpers.h)
 * under the GPU helper set; their prototype is built in @scratch.
 */
const struct helper_proto *proto_lookup(int32_t id, int abi,
					const struct user_helper *users,
					struct helper_proto *scratch);
/* Whether a map of type @type belongs to @group. */
bool map_in_group(uint32_t type, uint8_t group);

#endif
