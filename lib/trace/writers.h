/* SPDX-License-Identifier: MIT */
/*
 * What the trace writers share: the frames of an operation's path (its
 * launch's host stack, the API, the GPU operation, a device tag), one
 * total order on paths so equal paths are adjacent, and text escaping.
 */
#ifndef EGPU_TRACE_WRITERS_H
#define EGPU_TRACE_WRITERS_H

#include <stdbool.h>

#include "core/core.h"
#include "trace.h"

/* The root of operations no launch API call was joined to. */
#define UNKNOWN_LAUNCH "[unknown launch]"

enum frame_kind {
	FRAME_HOST,   /* a host stack frame or the API */
	FRAME_OP,     /* the GPU operation: "[GPU_Kernel]name" */
	FRAME_DEVICE, /* "[GPU n]", only when several devices ran work */
};

struct frame {
	enum frame_kind kind;
	const char *name;     /* host frame, or the operation's name */
	uint32_t num;         /* FRAME_OP: enum trace_op_kind; FRAME_DEVICE: id */
};

/*
 * The frames of one operation, outermost first: the host part (stack
 * frames, then the API unless the stack already ends in it, or
 * UNKNOWN_LAUNCH alone), the operation, and with @device_tag its device.
 */
struct op_path {
	const char *const *host;
	uint32_t host_n;
	const char *api;      /* one host frame more, or NULL */
	const struct trace_op *op;
	bool device_tag;
};

void op_path(const struct trace_data *td, const struct trace_op *op,
	     bool device_tag, struct op_path *p);
uint32_t path_host_depth(const struct op_path *p);
uint32_t path_depth(const struct op_path *p);
struct frame path_frame(const struct op_path *p, uint32_t i);
int frame_cmp(const struct frame *a, const struct frame *b);

/* Whether the operations ran on more than one device. */
bool trace_multi_device(const struct trace_data *td);
/* GPU time of an operation (0 if its record is inverted). */
uint64_t op_ns(const struct trace_op *op);

/* Number of equal leading frames of @a and @b. */
uint32_t paths_common(const struct op_path *a, const struct op_path *b);

enum path_order {
	BY_PATH,    /* every operation, by its whole path */
	BY_KERNEL,  /* kernels only, by name, then by path */
};

/* Operations that share one path: a representative and their totals. */
struct path_group {
	size_t op;       /* index of one of them in trace_data.ops */
	uint64_t ns;     /* their GPU time */
	uint64_t ops;    /* how many */
};

/*
 * The distinct paths in @order (order.c): lexicographic, a host part that
 * is a prefix of another first, so paths sharing a prefix are adjacent.
 * Malloc'ed into *groups (NULL when there are none); 0 or EGPU_ENOMEM.
 */
int path_groups(const struct trace_data *td, enum path_order order,
		bool device_tag, struct path_group **groups, size_t *n);

/*
 * A frame as text in the folded format: the operation as
 * "[GPU_Kernel]name", "[GPU_Memcpy]HtoD", "[GPU_Memset]..."; ';' (the
 * separator) becomes ':' and control characters become '?'.
 */
void frame_put(struct strbuf *sb, const struct frame *f);
/* @s with control characters as '?', and with @folded ';' as ':'. */
void text_put(struct strbuf *sb, const char *s, bool folded);
/* The first @depth frames of @p joined by ';': "main;f;cudaLaunchKernel". */
void path_put(struct strbuf *sb, const struct op_path *p, uint32_t depth);

/* @s with invalid UTF-8 as U+FFFD (protobuf strings must be UTF-8). */
void utf8_put(struct strbuf *sb, const char *s);
/* @s as JSON string contents / XML text; invalid UTF-8 becomes U+FFFD. */
void json_escape(struct strbuf *sb, const char *s);
void xml_escape(struct strbuf *sb, const char *s);

/* @v in decimal (what the writers print millions of times: no printf). */
void put_u64(struct strbuf *sb, uint64_t v);

/* Write out what @sb holds and empty it, keeping its memory. */
void out_flush(struct strbuf *sb, FILE *f);
/* Free @sb; 0, or EGPU_ENOMEM / EGPU_EIO if writing @what failed. */
int out_done(struct strbuf *sb, FILE *f, const char *what);

#endif
