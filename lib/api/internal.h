/* SPDX-License-Identifier: MIT */
/* The objects behind the public handles. */
#ifndef EGPU_API_INTERNAL_H
#define EGPU_API_INTERNAL_H

#include <pthread.h>

#include "core/core.h"
#include "jit/jit.h"
#include "maps/host_map.h"
#include "object/object.h"

struct egpu_ctx {
	struct egpu_logger log;
	char sm[16];
	struct egpu_obj *objs; /* every open object, for egpu_ctx_free() */
};

struct egpu_map {
	struct egpu_obj *obj;
	const struct bpf_map_spec *spec;
	struct host_map *host;
};

struct egpu_prog {
	struct egpu_obj *obj;
	const struct bpf_prog_spec *spec;
	pthread_mutex_t lock;    /* guards the lazily built host code */
	struct jit_host *host;
};

struct egpu_obj {
	struct egpu_ctx *ctx;
	struct egpu_obj *next, *prev;
	char *name;
	int abi;
	struct bpf_object_spec spec;
	struct egpu_prog *progs;
	struct egpu_map *maps;
};

/* The jit_map table of @obj for host execution. */
void obj_host_jit_maps(const struct egpu_obj *obj, struct jit_map *out);
/* Fill a jit_input for @prog; @maps has one entry per map of its object. */
void prog_jit_input(const struct egpu_prog *prog, const struct jit_map *maps,
		    struct jit_input *in);
int prog_run_gpu(struct egpu_prog *prog, struct egpu_run_opts *opts);

#endif
