/* SPDX-License-Identifier: MIT */
/*
 * The SIMT helpers (512-517) in the JIT: CPU results (one lane), the PTX
 * each one lowers to, and ptxas accepting it for sm_75 (the oldest target
 * CUDA 13 knows; match and nanosleep need sm_70) and sm_90.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/helpers.h"
#include "jit_test.h"
#include "test_util.h"

/* One array map whose values the programs address with lddw. */
static const struct jit_map maps[] = {
	{ .addr = 0x1000, .value_addr = 0x7000000, .type = EGPU_MAP_ARRAY,
	  .key_size = 4, .value_size = 16, .max_entries = 4 },
};

#define RUN(p, mem, len)                                                       \
	run_host(&(struct jit_input){ .name = "simt", .insns = (p),            \
				      .insn_cnt = ARRAY_SIZE(p),               \
				      .helpers = EGPU_HELPERS_GPU },           \
		 (mem), (len))

START_TEST(cpu_is_one_lane)
{
	const struct bpf_insn mask[] = { CALL(HELPER_ACTIVE_MASK), EXIT };
	const struct bpf_insn ballot_set[] = { MOV64(1, 7),
					       CALL(HELPER_WARP_BALLOT), EXIT };
	const struct bpf_insn ballot_clear[] = { MOV64(1, 0),
						 CALL(HELPER_WARP_BALLOT), EXIT };
	const struct bpf_insn match[] = { MOV64(1, 123), CALL(HELPER_WARP_MATCH),
					  EXIT };
	const struct bpf_insn shfl[] = { LDDW(1, 0xabcdef0123456789ull),
					 MOV64(2, 5), CALL(HELPER_WARP_SHFL), EXIT };

	ck_assert_uint_eq(RUN(mask, NULL, 0), 1);
	ck_assert_uint_eq(RUN(ballot_set, NULL, 0), 1);
	ck_assert_uint_eq(RUN(ballot_clear, NULL, 0), 0);
	ck_assert_uint_eq(RUN(match, NULL, 0), 1);
	ck_assert_uint_eq(RUN(shfl, NULL, 0), 0xabcdef0123456789ull);
}
END_TEST

/* Two adds: each returns the value before it; memory ends at the sum. */
START_TEST(cpu_warp_add_fetches)
{
	const struct bpf_insn p[] = {
		MOV64_REG(6, 1), MOV64(2, 5), CALL(HELPER_WARP_ADD),
		MOV64_REG(7, 0), MOV64_REG(1, 6), MOV64(2, 7),
		CALL(HELPER_WARP_ADD), LDX(BPF_DW, 8, 6, 0),
		ALU64_IMM(BPF_MUL, 7, 10000), ALU64_IMM(BPF_MUL, 0, 100),
		ALU64_REG(BPF_ADD, 0, 7), ALU64_REG(BPF_ADD, 0, 8), EXIT,
	};
	uint64_t mem[2] = { 10, 99 };

	ck_assert_uint_eq(RUN(p, mem, sizeof(mem)), 10 * 10000 + 15 * 100 + 22);
	ck_assert_uint_eq(mem[0], 22);
	ck_assert_uint_eq(mem[1], 99);
}
END_TEST

static double run_ms(const struct bpf_insn *p, size_t n)
{
	struct jit_input in = test_input("sleep", p, n, EGPU_HELPERS_GPU);
	uint64_t t0 = now_ns();

	ck_assert_uint_eq(run_host(&in, NULL, 0), 0);
	return (now_ns() - t0) / 1e6;
}

/* Sleeps as asked, and at most 1 ms per call however much is asked. */
START_TEST(cpu_nanosleep_bounded)
{
	const struct bpf_insn some[] = { MOV64(1, 300000),
					 CALL(HELPER_NANOSLEEP), EXIT };
	const struct bpf_insn huge[] = { LDDW(1, ~0ull), CALL(HELPER_NANOSLEEP),
					 EXIT };

	ck_assert_double_ge(run_ms(some, ARRAY_SIZE(some)), 0.3);
	ck_assert_double_lt(run_ms(huge, ARRAY_SIZE(huge)), 500);
}
END_TEST

static char *ptx_for(const struct bpf_insn *p, size_t n, const char *sm)
{
	struct jit_input in = test_input("simt", p, n, EGPU_HELPERS_GPU);
	char *ptx = NULL, log[2048];
	int err;

	in.maps = maps;
	in.map_cnt = ARRAY_SIZE(maps);
	err = jit_ptx(&in, sm, false, &ptx, NULL, NULL);
	ck_assert_msg(!err, "jit_ptx: %d %s", err, egpu_errmsg());
	if (tu_have_ptxas())
		ck_assert_msg(tu_ptxas(ptx, strlen(ptx), sm, false, log,
				       sizeof(log)),
			      "ptxas %s:\n%s\n%s", sm, log, ptx);
	return ptx;
}

static void assert_ptx(const struct bpf_insn *p, size_t n, const char *want,
		       const char *unwanted)
{
	static const char *const sms[] = { "sm_75", "sm_90" };

	for (size_t i = 0; i < ARRAY_SIZE(sms); i++) {
		char *ptx = ptx_for(p, n, sms[i]);

		ck_assert_msg(strstr(ptx, want), "%s lacks \"%s\":\n%s", sms[i],
			      want, ptx);
		ck_assert_msg(!unwanted || !strstr(ptx, unwanted),
			      "%s has \"%s\":\n%s", sms[i], unwanted, ptx);
		free(ptx);
	}
}

#define ASSERT_PTX(p, want, unwanted) assert_ptx(p, ARRAY_SIZE(p), want, unwanted)

/* &value of key 0 of the array map, as clang emits for a global counter. */
#define COUNTER(reg) LDDW_SRC(reg, BPF_PSEUDO_MAP_IDX_VALUE, 0, 8)

START_TEST(ptx_votes_and_shuffles)
{
	const struct bpf_insn mask[] = { CALL(HELPER_ACTIVE_MASK), EXIT };
	const struct bpf_insn ballot[] = { MOV64_REG(1, 2),
					   CALL(HELPER_WARP_BALLOT), EXIT };
	const struct bpf_insn match[] = { LDX(BPF_DW, 1, 1, 0),
					  CALL(HELPER_WARP_MATCH), EXIT };
	const struct bpf_insn shfl[] = { LDX(BPF_DW, 1, 1, 0), MOV64(2, 3),
					 CALL(HELPER_WARP_SHFL), EXIT };

	ASSERT_PTX(mask, "activemask.b32", NULL);
	ASSERT_PTX(ballot, "vote.sync.ballot.b32", NULL);
	ASSERT_PTX(match, "match.any.sync.b64", NULL);
	ASSERT_PTX(shfl, "shfl.sync.idx.b32", NULL);
}
END_TEST

/* Occurrences of @what in the sm_90 PTX of @p. */
static unsigned ptx_count(const struct bpf_insn *p, size_t n, const char *what)
{
	char *ptx = ptx_for(p, n, "sm_90");
	unsigned k = 0;

	for (const char *at = ptx; (at = strstr(at, what)); at++)
		k++;
	free(ptx);
	return k;
}

/*
 * warp_add and atomics first check with shuffles and a vote whether all
 * active lanes add the same value at the same address (then the active
 * mask is the group); only otherwise they group lanes with match. The
 * fetched value is shuffled back unless nobody reads it. The atomic is a
 * global-space one (map values are global memory).
 */
START_TEST(ptx_warp_add)
{
	const struct bpf_insn fetch[] = { COUNTER(1), MOV64(2, 1),
					  CALL(HELPER_WARP_ADD), EXIT };
	const struct bpf_insn plain[] = { COUNTER(1), MOV64(2, 1),
					  ATOMIC(BPF_DW, 1, 2, 0, BPF_ADD),
					  MOV64(0, 0), EXIT };
	const struct bpf_insn unused[] = { COUNTER(1), MOV64(2, 4),
					   CALL(HELPER_WARP_ADD), MOV64(0, 0),
					   EXIT };

	ASSERT_PTX(fetch, "vote.sync.all.pred", NULL);
	ASSERT_PTX(fetch, "match.any.sync.b64", NULL);
	ASSERT_PTX(fetch, "atom.global.add.u64", "\tatom.add");
	ASSERT_PTX(plain, "vote.sync.all.pred", "match.all.sync");
	ASSERT_PTX(unused, "atom.global.add.u64", "\tatom.add");
	ck_assert_uint_gt(ptx_count(fetch, ARRAY_SIZE(fetch), "shfl.sync"),
			  ptx_count(unused, ARRAY_SIZE(unused), "shfl.sync"));
	ck_assert_uint_gt(ptx_count(fetch, ARRAY_SIZE(fetch), "shfl.sync"),
			  ptx_count(plain, ARRAY_SIZE(plain), "shfl.sync"));
}
END_TEST

/*
 * Different operands per lane: redux.sync from sm_80 on (three for a 64-bit
 * add, two for 64-bit bitwise operations), a scan by shuffles before (fns
 * finds the lanes below); fetching forms scan on every target.
 */
START_TEST(ptx_warp_rmw_ops)
{
	static const struct { int op; const char *redux, *atom; } ops[] = {
		{ BPF_ADD, "redux.sync.add", "atom.global.add.u64" },
		{ BPF_OR, "redux.sync.or", "atom.global.or.b64" },
		{ BPF_AND, "redux.sync.and", "atom.global.and.b64" },
		{ BPF_XOR, "redux.sync.xor", "atom.global.xor.b64" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		const struct bpf_insn plain[] = { COUNTER(2), LDX(BPF_DW, 1, 1, 0),
						  ATOMIC(BPF_DW, 2, 1, 0, ops[i].op),
						  MOV64(0, 0), EXIT };
		const struct bpf_insn fetch[] = { COUNTER(2), LDX(BPF_DW, 1, 1, 0),
						  ATOMIC(BPF_DW, 2, 1, 0, ops[i].op | BPF_FETCH),
						  MOV64_REG(0, 1), EXIT };
		char *p75 = ptx_for(plain, ARRAY_SIZE(plain), "sm_75");

		ck_assert_msg(strstr(p75, "fns.b32") && !strstr(p75, "redux"),
			      "sm_75:\n%s", p75);
		free(p75);
		ck_assert_uint_eq(ptx_count(plain, ARRAY_SIZE(plain), ops[i].redux),
				  ops[i].op == BPF_ADD ? 3 : 2);
		ck_assert_uint_eq(ptx_count(plain, ARRAY_SIZE(plain), "fns.b32"), 0);
		ck_assert_uint_gt(ptx_count(fetch, ARRAY_SIZE(fetch), "fns.b32"), 0);
		ASSERT_PTX(plain, ops[i].atom, "\tatom.add");
		ASSERT_PTX(fetch, ops[i].atom, "\tatom.add");
	}
}
END_TEST

START_TEST(ptx_nanosleep)
{
	const struct bpf_insn p[] = { LDX(BPF_DW, 1, 1, 0),
				      CALL(HELPER_NANOSLEEP), EXIT };

	ASSERT_PTX(p, "%globaltimer", "nanosleep.u32");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("simt_jit");
	TCase *cpu = tcase_create("cpu"), *ptx = tcase_create("ptx");

	tcase_add_test(cpu, cpu_is_one_lane);
	tcase_add_test(cpu, cpu_warp_add_fetches);
	tcase_add_test(cpu, cpu_nanosleep_bounded);
	tcase_set_timeout(ptx, 60);
	tcase_add_test(ptx, ptx_votes_and_shuffles);
	tcase_add_test(ptx, ptx_warp_add);
	tcase_add_test(ptx, ptx_warp_rmw_ops);
	tcase_add_test(ptx, ptx_nanosleep);
	suite_add_tcase(s, cpu);
	suite_add_tcase(s, ptx);
	return tu_run_suite(s, true);
}
