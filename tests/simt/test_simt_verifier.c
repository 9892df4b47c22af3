/* SPDX-License-Identifier: MIT */
/*
 * Verifier prototypes of the SIMT helpers: where they are allowed, and
 * warp_add's counter, which must be 8 writable, aligned bytes of a map
 * value (an atomic on the private stack or a NULL pointer is refused).
 */
#include <check.h>
#include <string.h>

#include "core/core.h"
#include "core/helpers.h"
#include "jit_test.h"
#include "test_util.h"
#include "verifier/verifier.h"

enum { M_COUNTS, M_SMALL, M_RODATA };

static const struct map_spec maps[] = {
	[M_COUNTS] = { .name = "counts", .type = EGPU_MAP_ARRAY, .key_size = 4,
		       .value_size = 16, .max_entries = 8 },
	[M_SMALL] = { .name = "small", .type = EGPU_MAP_ARRAY, .key_size = 4,
		      .value_size = 4, .max_entries = 8 },
	[M_RODATA] = { .name = ".rodata", .type = EGPU_MAP_ARRAY, .key_size = 4,
		       .value_size = 16, .max_entries = 1, .readonly = 1 },
};

static int verify_at(const struct bpf_insn *p, size_t n, int attach)
{
	struct prog_spec spec = { .name = "simt",
				      .insns = (struct bpf_insn *)p,
				      .insn_cnt = n };
	struct verifier_opts o = { .abi = EGPU_HELPERS_GPU, .attach = attach };

	return verifier_run(&spec, maps, ARRAY_SIZE(maps), &o, NULL);
}

static void accepted(const struct bpf_insn *p, size_t n)
{
	static const int at[] = { EGPU_ATTACH_NONE, EGPU_ATTACH_ENTRY,
				  EGPU_ATTACH_EXIT, EGPU_ATTACH_MEM };

	for (size_t i = 0; i < ARRAY_SIZE(at); i++)
		ck_assert_msg(!verify_at(p, n, at[i]), "attach %d: %s", at[i],
			      egpu_errmsg());
}

static void refused(const struct bpf_insn *p, size_t n, const char *why)
{
	int err = verify_at(p, n, EGPU_ATTACH_MEM);

	ck_assert_int_eq(err, EGPU_EVERIFY);
	ck_assert_msg(strstr(egpu_errmsg(), why), "\"%s\" lacks \"%s\"",
		      egpu_errmsg(), why);
}

#define ACCEPTED(p) accepted(p, ARRAY_SIZE(p))
#define REFUSED(p, why) refused(p, ARRAY_SIZE(p), why)

/* r0 = &map's value of key 0, or NULL; the NULL check is the caller's. */
#define LOOKUP(map)                                                            \
	ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4),     \
	LDDW_SRC(1, BPF_PSEUDO_MAP_IDX, map, 0), CALL(HELPER_MAP_LOOKUP)

START_TEST(scalars_everywhere)
{
	const struct bpf_insn p[] = {
		CALL(HELPER_ACTIVE_MASK), MOV64_REG(1, 0), CALL(HELPER_WARP_BALLOT),
		MOV64_REG(1, 0), CALL(HELPER_WARP_MATCH), MOV64_REG(1, 0),
		MOV64(2, 0), CALL(HELPER_WARP_SHFL), MOV64(1, 100),
		CALL(HELPER_NANOSLEEP), EXIT,
	};

	ACCEPTED(p);
}
END_TEST

START_TEST(scalar_args_refuse_pointers)
{
	const struct bpf_insn sleep[] = { MOV64_REG(1, 10),
					  CALL(HELPER_NANOSLEEP), EXIT };
	const struct bpf_insn ballot[] = { CALL(HELPER_WARP_BALLOT), EXIT }; /* r1: ctx */
	const struct bpf_insn shfl[] = { MOV64(1, 1), MOV64_REG(2, 10),
					 CALL(HELPER_WARP_SHFL), EXIT };

	REFUSED(sleep, "r1 must be a scalar for nanosleep");
	REFUSED(ballot, "r1 must be a scalar for warp_ballot, got ctx");
	REFUSED(shfl, "r2 must be a scalar for warp_shfl");
}
END_TEST

START_TEST(warp_add_on_map_values)
{
	const struct bpf_insn looked_up[] = {
		LOOKUP(M_COUNTS), JMP_IMM(BPF_JEQ, 0, 0, 4), MOV64_REG(1, 0),
		ALU64_IMM(BPF_ADD, 1, 8), MOV64(2, 1), CALL(HELPER_WARP_ADD),
		MOV64(0, 0), EXIT,
	};
	const struct bpf_insn global[] = {
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX_VALUE, M_COUNTS, 8),
		MOV64(2, 3), CALL(HELPER_WARP_ADD), EXIT,
	};

	ACCEPTED(looked_up);
	ACCEPTED(global);
}
END_TEST

START_TEST(warp_add_refusals)
{
	const struct bpf_insn stack[] = {
		ST(BPF_DW, 10, -8, 0), MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -8),
		MOV64(2, 1), CALL(HELPER_WARP_ADD), EXIT,
	};
	const struct bpf_insn unchecked[] = {
		LOOKUP(M_COUNTS), MOV64_REG(1, 0), MOV64(2, 1),
		CALL(HELPER_WARP_ADD), EXIT,
	};
	const struct bpf_insn misaligned[] = {
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX_VALUE, M_COUNTS, 4), MOV64(2, 1),
		CALL(HELPER_WARP_ADD), EXIT,
	};
	const struct bpf_insn too_small[] = {
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX_VALUE, M_SMALL, 0), MOV64(2, 1),
		CALL(HELPER_WARP_ADD), EXIT,
	};
	const struct bpf_insn past_end[] = {
		LOOKUP(M_COUNTS), JMP_IMM(BPF_JEQ, 0, 0, 4), MOV64_REG(1, 0),
		ALU64_IMM(BPF_ADD, 1, 16), MOV64(2, 1), CALL(HELPER_WARP_ADD),
		MOV64(0, 0), EXIT,
	};
	const struct bpf_insn read_only[] = {
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX_VALUE, M_RODATA, 0), MOV64(2, 1),
		CALL(HELPER_WARP_ADD), EXIT,
	};
	const struct bpf_insn pointer_delta[] = {
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX_VALUE, M_COUNTS, 0),
		MOV64_REG(2, 10), CALL(HELPER_WARP_ADD), EXIT,
	};
	const struct bpf_insn scalar[] = {
		MOV64(1, 4096), MOV64(2, 1), CALL(HELPER_WARP_ADD), EXIT,
	};

	REFUSED(stack, "r1 must point into a map value for warp_add");
	REFUSED(unchecked, "r1 must point into a map value for warp_add");
	REFUSED(misaligned, "misaligned");
	REFUSED(too_small, "out-of-bounds");
	REFUSED(past_end, "out-of-bounds");
	REFUSED(read_only, "write into read-only map '.rodata'");
	REFUSED(pointer_delta, "r2 must be a scalar for warp_add");
	REFUSED(scalar, "r1 must point into a map value for warp_add");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("simt_verifier");
	TCase *tc = tcase_create("protos");

	tcase_add_test(tc, scalars_everywhere);
	tcase_add_test(tc, scalar_args_refuse_pointers);
	tcase_add_test(tc, warp_add_on_map_values);
	tcase_add_test(tc, warp_add_refusals);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
