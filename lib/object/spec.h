/* SPDX-License-Identifier: MIT */
/* Building a struct object_spec, shared by the ELF and raw loaders. */
#ifndef EGPU_OBJECT_SPEC_H
#define EGPU_OBJECT_SPEC_H

#include "object/object.h"

/*
 * Append a program: copies @name, @section and @insn_cnt instructions, and
 * reads the attach point and kernel pattern from @section.
 */
int object_spec_add_prog(struct object_spec *spec, const char *name,
			 const char *section, const void *insns,
			 size_t insn_cnt);

#endif
