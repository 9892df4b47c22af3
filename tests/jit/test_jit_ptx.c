/* SPDX-License-Identifier: MIT */
/*
 * The PTX back end's output: signatures, targets, helper lowering, the
 * alignment strategy and what the verifier's facts spare, read from the
 * PTX text (no ptxas needed).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/helpers.h"
#include "jit_test.h"
#include "test_util.h"
#include "verifier/verifier.h"

static const struct jit_map maps[] = {
	{ .addr = 0x1000, .value_addr = 0x7000000, .type = EGPU_MAP_ARRAY,
	  .key_size = 4, .value_size = 8, .max_entries = 16 },
	{ .addr = 0x2000, .type = EGPU_MAP_HASH, .key_size = 4,
	  .value_size = 8, .max_entries = 16 },
	/* Values 12 bytes apart: every other one is only 4-aligned. */
	{ .addr = 0x3000, .value_addr = 0x8000000, .type = EGPU_MAP_ARRAY,
	  .key_size = 4, .value_size = 12, .max_entries = 16 },
};

/* The same maps as the verifier sees them. */
static const struct map_spec map_specs[] = {
	{ .type = EGPU_MAP_ARRAY, .key_size = 4, .value_size = 8,
	  .max_entries = 16 },
	{ .type = EGPU_MAP_HASH, .key_size = 4, .value_size = 8,
	  .max_entries = 16 },
	{ .type = EGPU_MAP_ARRAY, .key_size = 4, .value_size = 12,
	  .max_entries = 16 },
};

static char *ptx_from(struct jit_input *in, const char *sm, bool kernel,
		      unsigned *needs)
{
	char *ptx = NULL;
	size_t len = 0;
	int err;

	in->maps = maps;
	in->map_cnt = ARRAY_SIZE(maps);
	err = jit_ptx(in, sm, kernel, &ptx, &len, needs);
	ck_assert_msg(!err, "jit_ptx: %d %s", err, egpu_errmsg());
	ck_assert_uint_eq(strlen(ptx), len);
	return ptx;
}

/* PTX of @p; @aligned: a probe's, its accesses proven naturally aligned. */
static char *ptx_of(const struct bpf_insn *p, size_t n, const char *sm,
		    bool kernel, bool aligned, unsigned *needs)
{
	struct jit_input in = test_input("probe", p, n, EGPU_HELPERS_GPU);

	in.aligned = aligned;
	return ptx_from(&in, sm, kernel, needs);
}

/*
 * PTX of entry probe @p with what the verifier proved of it, passed on
 * the way the API layer does (lib/api/verify.c, translate.c).
 */
static char *verified_ptx(const struct bpf_insn *p, size_t n)
{
	struct prog_spec spec = { .name = "probe", .attach = EGPU_ATTACH_ENTRY,
				  .insns = (struct bpf_insn *)p, .insn_cnt = n };
	bool *never_stack = calloc(n, sizeof(bool));
	struct verifier_opts o = { .abi = EGPU_HELPERS_GPU,
				   .attach = EGPU_ATTACH_ENTRY,
				   .never_stack = never_stack };
	struct jit_input in = test_input("probe", p, n, EGPU_HELPERS_GPU);
	char *ptx;
	int err;

	ck_assert_ptr_nonnull(never_stack);
	err = verifier_run(&spec, map_specs, ARRAY_SIZE(map_specs), &o, NULL);
	ck_assert_msg(!err, "verifier_run: %d %s", err, egpu_errmsg());
	in.aligned = true;
	in.never_stack = never_stack;
	ptx = ptx_from(&in, "sm_90", false, NULL);
	free(never_stack);
	return ptx;
}

static size_t count_of(const char *text, const char *s)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, s)); p += strlen(s))
		n++;
	return n;
}

static char *ptx_needs(const struct bpf_insn *p, size_t n, const char *sm,
		       bool kernel, unsigned *needs)
{
	return ptx_of(p, n, sm, kernel, false, needs);
}

#define PTX(p, kernel) ptx_needs(p, ARRAY_SIZE(p), "sm_90", kernel, NULL)
#define PROBE_PTX(p) ptx_of(p, ARRAY_SIZE(p), "sm_90", false, true, NULL)

static void assert_has(const char *ptx, const char *s, bool want)
{
	ck_assert_msg(!!strstr(ptx, s) == want, "PTX %s \"%s\":\n%s",
		      want ? "lacks" : "has", s, ptx);
}

START_TEST(signature_and_kernel)
{
	const struct bpf_insn p[] = { MOV64_REG(0, 2), EXIT };
	char *ptx = PTX(p, false);

	assert_has(ptx, ".target sm_90", true);
	assert_has(ptx, ".visible .func  (.param .b64 func_retval0) probe(", true);
	assert_has(ptx, ".entry", false);
	free(ptx);
	ptx = PTX(p, true);
	assert_has(ptx, ".visible .entry probe_kernel(", true);
	free(ptx);
}
END_TEST

START_TEST(targets)
{
	const struct bpf_insn p[] = { MOV64(0, 0), EXIT };
	char *ptx;

	ptx = ptx_needs(p, 2, "sm_90a", false, NULL);
	assert_has(ptx, ".target sm_90\n", true);
	free(ptx);
	ptx = ptx_needs(p, 2, "sm_80", false, NULL);
	assert_has(ptx, ".target sm_80\n", true);
	free(ptx);
	/* Newer than this LLVM knows: code for the newest it knows, under
	 * the target's own .target and .version lines. */
	ptx = ptx_needs(p, 2, "sm_120", false, NULL);
	assert_has(ptx, ".version 8.7\n.target sm_120\n", true);
	free(ptx);
	ptx = ptx_needs(p, 2, "sm_100a", false, NULL);
	assert_has(ptx, ".version 8.6\n.target sm_100a\n", true);
	free(ptx);
	ptx = ptx_needs(p, 2, NULL, false, NULL);
	assert_has(ptx, ".target sm_90\n", true);
	free(ptx);
}
END_TEST

/* Subprograms are internal functions named after the program. */
START_TEST(subprogram_names)
{
	/* Recursive, so it stays a function of its own. */
	const struct bpf_insn p[] = {
		MOV64_REG(1, 2), CALL_LOCAL(1), EXIT,
		/* fib(r1) */
		MOV64_REG(0, 1), JMP_IMM(BPF_JLE, 1, 1, 8),
		MOV64_REG(6, 1), ALU64_IMM(BPF_SUB, 1, 1), CALL_LOCAL(-5),
		MOV64_REG(7, 0), MOV64_REG(1, 6), ALU64_IMM(BPF_SUB, 1, 2),
		CALL_LOCAL(-9), ALU64_REG(BPF_ADD, 0, 7), EXIT,
	};
	char *ptx = PTX(p, false);

	assert_has(ptx, ".func  (.param .b64 func_retval0) probe_sub3(", true);
	assert_has(ptx, ".visible .func  (.param .b64 func_retval0) probe_sub3(",
		   false);
	free(ptx);
}
END_TEST

#define LOOKUP(map)                                                            \
	MOV64(1, 3), STX(BPF_W, 10, 1, -4),                                    \
	LDDW_SRC(1, BPF_PSEUDO_MAP_IDX, map, 0), MOV64_REG(2, 10),             \
	ALU64_IMM(BPF_ADD, 2, -4), CALL(HELPER_MAP_LOOKUP), EXIT

START_TEST(array_lookup_is_inline)
{
	const struct bpf_insn array[] = { LOOKUP(0) };
	const struct bpf_insn hash[] = { LOOKUP(1) };
	char *ptx = PTX(array, false);

	/* key 3 < 16: the value address is a constant, 0x7000000 + 24. */
	assert_has(ptx, "egpu_dev_map_lookup_elem", false);
	assert_has(ptx, "117440536", true);
	free(ptx);
	ptx = PTX(hash, false);
	assert_has(ptx, ".extern .func  (.param .b64 func_retval0) egpu_dev_map_lookup_elem", true);
	free(ptx);
}
END_TEST

START_TEST(inline_helpers)
{
	static const struct {
		int32_t id;
		const char *text;
	} cases[] = {
		{ HELPER_KTIME_GET_NS, "%globaltimer" },
		{ HELPER_GLOBALTIMER, "%globaltimer" },
		{ HELPER_BLOCK_IDX, "%ctaid.z" },
		{ HELPER_BLOCK_DIM, "%ntid.x" },
		{ HELPER_THREAD_IDX, "%tid.x" },
		{ HELPER_GRID_DIM, "%nctaid.x" },
		{ HELPER_SMID, "%smid" },
		{ HELPER_WARPID, "%warpid" },
		{ HELPER_LANEID, "%laneid" },
		{ HELPER_MEMBAR, "membar.sys" },
		{ HELPER_EXIT_THREAD, "exit;" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct bpf_insn p[] = {
			ST(BPF_DW, 10, -8, 0), ST(BPF_DW, 10, -16, 0),
			ST(BPF_DW, 10, -24, 0), MOV64(0, 0),
			MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -8),
			MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -16),
			MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -24),
			CALL(cases[i].id), LDX(BPF_DW, 1, 10, -24),
			ALU64_REG(BPF_ADD, 0, 1), LDX(BPF_DW, 1, 10, -8),
			ALU64_REG(BPF_ADD, 0, 1), EXIT,
		};
		char *ptx = PTX(p, false);

		assert_has(ptx, cases[i].text, true);
		assert_has(ptx, ".extern", false);
		free(ptx);
	}
}
END_TEST

START_TEST(extern_helpers)
{
	const unsigned rt = JIT_NEED_RUNTIME, print = rt | JIT_NEED_PRINT;
	const struct {
		int32_t id;
		const char *name;
		unsigned needs; /* what jit_ptx reports */
	} cases[] = {
		{ HELPER_MAP_UPDATE, "egpu_dev_map_update_elem", rt },
		{ HELPER_MAP_DELETE, "egpu_dev_map_delete_elem", rt },
		{ HELPER_TRACE_PRINTK, "egpu_dev_trace_printk", print },
		{ HELPER_PERF_EVENT_OUTPUT, "egpu_dev_perf_event_output", rt },
		{ HELPER_RINGBUF_RESERVE, "egpu_dev_ringbuf_reserve", rt },
		{ HELPER_PUTS, "egpu_dev_puts", print },
	};
	const struct bpf_insn none[] = { MOV64(0, 0), EXIT };
	unsigned needs = ~0u;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct bpf_insn p[] = { CALL(cases[i].id), EXIT };
		char *ptx = ptx_needs(p, ARRAY_SIZE(p), "sm_90", false, &needs);

		assert_has(ptx, ".extern .func", true);
		assert_has(ptx, cases[i].name, true);
		ck_assert_uint_eq(needs, cases[i].needs);
		free(ptx);
	}
	free(ptx_needs(none, ARRAY_SIZE(none), "sm_90", true, &needs));
	ck_assert_uint_eq(needs, 0);
}
END_TEST

START_TEST(pid_tgid_is_constant)
{
	const struct bpf_insn p[] = { CALL(HELPER_GET_PID_TGID), EXIT };
	char *ptx = PTX(p, false);

	assert_has(ptx, "call", false);
	free(ptx);
}
END_TEST

START_TEST(alignment)
{
	/* ctx is 8-aligned: a constant offset needs no test. */
	const struct bpf_insn ctx[] = { LDX(BPF_DW, 0, 1, 8), EXIT };
	/* A pointer read from memory: tested at run time, two paths. */
	const struct bpf_insn unknown[] = {
		LDX(BPF_DW, 3, 1, 0), LDX(BPF_DW, 0, 3, 0), EXIT,
	};
	/* The stack has a known layout: no byte accesses. */
	const struct bpf_insn stack[] = {
		MOV64(1, 5), STX(BPF_DW, 10, 1, -8), STX(BPF_W, 10, 1, -12),
		MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -12),
		CALL(HELPER_PUTS), EXIT,
	};
	char *ptx = PTX(ctx, false);

	assert_has(ptx, "ld.u64", true);
	assert_has(ptx, "ld.u8", false);
	free(ptx);
	ptx = PTX(unknown, false);
	assert_has(ptx, "ld.u64", true);
	assert_has(ptx, "ld.u8", true);
	free(ptx);
	ptx = PTX(stack, false);
	assert_has(ptx, ".u8", false);
	free(ptx);
}
END_TEST

/*
 * r0 = the value of key *(u32 *)ctx in map @map, the next @skip
 * instructions jumped over where there is none.
 */
#define VALUE_OF(map, skip)                                                    \
	LDX(BPF_W, 1, 1, 0), STX(BPF_W, 10, 1, -4),                            \
	LDDW_SRC(1, BPF_PSEUDO_MAP_IDX, map, 0), MOV64_REG(2, 10),             \
	ALU64_IMM(BPF_ADD, 2, -4), CALL(HELPER_MAP_LOOKUP),                    \
	JMP_IMM(BPF_JEQ, 0, 0, skip)

/*
 * A probe's accesses through a map value pointer: the verifier proved them
 * aligned to the value's start, and LLVM proves the start's alignment from
 * the array's address and value size, so 8 bytes load as one ld.u64
 * (not eight ld.u8) where the values are 8 bytes apart, and as two
 * 4-byte halves where they are 12 bytes apart.
 */
START_TEST(probe_map_values_load_whole)
{
	const struct bpf_insn by8[] = {
		VALUE_OF(0, 1), LDX(BPF_DW, 0, 0, 0), EXIT,
	};
	const struct bpf_insn by12[] = {
		VALUE_OF(2, 1), LDX(BPF_DW, 0, 0, 0), EXIT,
	};
	char *ptx = PROBE_PTX(by8);

	assert_has(ptx, "ld.u64", true);
	assert_has(ptx, "ld.u8", false);
	free(ptx);
	ptx = PROBE_PTX(by12);
	assert_has(ptx, "ld.u32", true);
	assert_has(ptx, "ld.u64", false);
	assert_has(ptx, "ld.u8", false);
	free(ptx);
}
END_TEST

/*
 * Atomics on map values address global memory (atom.global.*): a generic
 * atom costs ptxas a dispatch on the address's window at every site. A
 * pointer that may hold a stack address is still tested (isspacep.local)
 * and given a plain read-modify-write there.
 */
START_TEST(atomics_reach_global_memory)
{
	const struct bpf_insn p[] = {
		VALUE_OF(0, 6), MOV64(1, 1),
		ATOMIC(BPF_DW, 0, 1, 0, BPF_ADD),
		ATOMIC(BPF_W, 0, 1, 4, BPF_OR | BPF_FETCH),
		MOV64_REG(2, 0), MOV64(0, 0),
		ATOMIC(BPF_DW, 2, 1, 0, BPF_CMPXCHG),
		/* A stack address the lifter loses track of (reloaded). */
		STX(BPF_DW, 10, 10, -16), LDX(BPF_DW, 3, 10, -16),
		MOV64(1, 1), ATOMIC(BPF_DW, 3, 1, -24, BPF_ADD), EXIT,
	};
	const struct bpf_insn helper[] = {
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX_VALUE, 0, 0), MOV64(2, 1),
		CALL(HELPER_WARP_ADD), EXIT,
	};
	char *ptx = PROBE_PTX(p);

	assert_has(ptx, "atom.global.add.u64", true);
	assert_has(ptx, "atom.global.or.b32", true);
	assert_has(ptx, "atom.global.cas.b64", true);
	assert_has(ptx, "\tatom.add", false);
	assert_has(ptx, "\tatom.or", false);
	assert_has(ptx, "\tatom.cas", false);
	assert_has(ptx, "isspacep.local", true);
	free(ptx);
	ptx = PROBE_PTX(helper);
	assert_has(ptx, "atom.global.add.u64", true);
	assert_has(ptx, "\tatom.add", false);
	free(ptx);
}
END_TEST

/*
 * Where the verifier proved an atomic's pointer never reaches a stack, the
 * atomic goes to global memory without the isspacep.local test; a stack
 * pointer the lifter loses track of keeps it.
 */
START_TEST(verified_map_atomics_skip_space_test)
{
	const struct bpf_insn p[] = {
		ST(BPF_DW, 10, -24, 0),
		VALUE_OF(0, 5), MOV64(1, 1),
		ATOMIC(BPF_DW, 0, 1, 0, BPF_ADD),
		MOV64_REG(2, 0), MOV64(0, 0),
		ATOMIC(BPF_DW, 2, 1, 0, BPF_CMPXCHG),
		/* A stack address the lifter loses track of (reloaded). */
		STX(BPF_DW, 10, 10, -16), LDX(BPF_DW, 3, 10, -16),
		MOV64(1, 1), ATOMIC(BPF_DW, 3, 1, -24, BPF_ADD | BPF_FETCH),
		MOV64(0, 0), EXIT,
	};
	char *ptx = PROBE_PTX(p);

	ck_assert_uint_eq(count_of(ptx, "isspacep.local"), 3);
	free(ptx);
	ptx = verified_ptx(p, ARRAY_SIZE(p));
	ck_assert_uint_eq(count_of(ptx, "isspacep.local"), 1);
	assert_has(ptx, "atom.global.add.u64", true);
	assert_has(ptx, "atom.global.cas.b64", true);
	assert_has(ptx, "\tatom.add", false);
	free(ptx);
}
END_TEST

/* A pointer that is the stack on one path and a map value on another. */
START_TEST(atomics_stack_on_some_path_keep_space_test)
{
	const struct bpf_insn p[] = {
		ST(BPF_DW, 10, -16, 0),
		VALUE_OF(0, 1), JA(2),
		MOV64_REG(0, 10), ALU64_IMM(BPF_ADD, 0, -16),
		MOV64(1, 1), ATOMIC(BPF_DW, 0, 1, 0, BPF_ADD | BPF_FETCH),
		MOV64(0, 0), EXIT,
	};
	char *ptx = verified_ptx(p, ARRAY_SIZE(p));

	ck_assert_uint_eq(count_of(ptx, "isspacep.local"), 1);
	assert_has(ptx, "atom.global.add.u64", true);
	free(ptx);
}
END_TEST

START_TEST(errors_leave_no_output)
{
	const struct bpf_insn p[] = { MOV64(0, 0) };
	struct jit_input in = test_input("probe", p, 1, EGPU_HELPERS_GPU);
	char *ptx = (char *)1;

	ck_assert_int_eq(jit_ptx(&in, "sm_90", true, &ptx, NULL, NULL), EGPU_EJIT);
	ck_assert_ptr_null(ptx);
	ck_assert_int_eq(jit_ptx(&in, "sm_90", true, NULL, NULL, NULL), EGPU_EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jit_ptx");
	TCase *tc = tcase_create("ptx");

	tcase_add_test(tc, signature_and_kernel);
	tcase_add_test(tc, targets);
	tcase_add_test(tc, subprogram_names);
	tcase_add_test(tc, array_lookup_is_inline);
	tcase_add_test(tc, inline_helpers);
	tcase_add_test(tc, extern_helpers);
	tcase_add_test(tc, pid_tgid_is_constant);
	tcase_add_test(tc, alignment);
	tcase_add_test(tc, probe_map_values_load_whole);
	tcase_add_test(tc, atomics_reach_global_memory);
	tcase_add_test(tc, verified_map_atomics_skip_space_test);
	tcase_add_test(tc, atomics_stack_on_some_path_keep_space_test);
	tcase_add_test(tc, errors_leave_no_output);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
