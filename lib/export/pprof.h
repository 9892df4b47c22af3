/* SPDX-License-Identifier: MIT */
/*
 * pprof profiles of a trace (pprof.c builds the Profile message with
 * protobuf-c's code for pprof's profile.proto, pprof_file.c writes it
 * gzip'd) and the string interning they share (intern.c).
 */
#ifndef EGPU_EXPORT_PPROF_H
#define EGPU_EXPORT_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "trace/trace.h"

struct intern {
	char **strs;        /* by id */
	size_t n;
	uint32_t *slots;    /* ids, UINT32_MAX for empty; cap a power of 2 */
	size_t cap;
};

/* The id of the @n bytes at @s, added if new; 0 or EGPU_ENOMEM. */
int intern(struct intern *t, const char *s, size_t n, uint32_t *id);
void intern_free(struct intern *t);

/*
 * The trace as a serialized (not yet compressed) perftools.profiles.Profile
 * in a malloc'ed *buf of *len bytes; @no_copies leaves memcpy / memset
 * out. 0, or EGPU_ENOMEM.
 */
int pprof_build(const struct trace_data *td, bool no_copies, uint8_t **buf,
		size_t *len);

/* The profile of @td gzip'd into @path ("-": stdout); 0 or EGPU_E*. */
int pprof_write(const struct trace_data *td, bool no_copies, const char *path);

#endif
