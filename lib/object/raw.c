/* SPDX-License-Identifier: MIT */
/* A raw instruction stream as an object with one program and no maps. */
#include "core/core.h"
#include "object/spec.h"

int object_parse_raw(const void *insns, size_t len,
		     struct object_spec *out)
{
	struct object_spec spec = { 0 };
	int err;

	if (!len)
		return err_set(EGPU_EFORMAT, "raw program is empty");
	if (!insns)
		return err_set(EGPU_EINVAL, "raw program: NULL instructions");
	if (len % sizeof(struct bpf_insn))
		return err_set(EGPU_EFORMAT,
			       "raw program: length %zu is not a multiple of 8 (the size of one instruction)",
			       len);
	err = object_spec_add_prog(&spec, "prog", "", insns,
				   len / sizeof(struct bpf_insn));
	if (err) {
		object_spec_free(&spec);
		return err;
	}
	*out = spec;
	return 0;
}
