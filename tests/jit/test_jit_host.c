/* SPDX-License-Identifier: MIT */
/*
 * The lifter through the host back end: the conformance vectors, the
 * hand-written corners (edge_cases.c), atomics, calls, maps, helpers and
 * every rejection.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/helpers.h"
#include "jit/host_helpers.h"
#include "jit_test.h"
#include "maps/host_map.h"
#include "test_util.h"

#define RUN(prog, mem, len)                                                    \
	run_host(&(struct jit_input){ .name = "t", .insns = (prog),            \
				      .insn_cnt = ARRAY_SIZE(prog) },          \
		 mem, len)

static struct vector *vectors;
static size_t vector_cnt;

/* Every conformance row with a result, on the host, all 64 bits. */
START_TEST(conformance_row)
{
	const struct vector *v = &vectors[_i];
	struct jit_input in;
	uint64_t r0;

	in = test_input("conformance", v->insns, v->insn_cnt,
			EGPU_HELPERS_CONFORMANCE);
	r0 = run_host(&in, v->mem, v->mem_len);
	if (!strcmp(v->name, "negative/incorrect_return_value_high_bits.data"))
		/* Its expected value is deliberately wrong in the high bits. */
		ck_assert_msg(r0 != v->expected && (uint32_t)r0 == (uint32_t)v->expected,
			      "%s: got 0x%016llx", v->name, (unsigned long long)r0);
	else
		ck_assert_msg(r0 == v->expected, "%s: got 0x%016llx, want 0x%016llx",
			      v->name, (unsigned long long)r0,
			      (unsigned long long)v->expected);
}
END_TEST

START_TEST(edge_case)
{
	const struct edge_case *c = &edge_cases[_i];
	struct jit_input in = test_input("edge", c->insns, c->insn_cnt,
					 EGPU_HELPERS_GPU);
	size_t len = strlen(c->mem) / 2;
	uint8_t mem[64];
	uint64_t r0;

	ck_assert_uint_le(len, sizeof(mem));
	for (size_t i = 0; i < len; i++)
		mem[i] = (uint8_t)strtoul((char[]){ c->mem[2 * i], c->mem[2 * i + 1], 0 },
					  NULL, 16);
	r0 = run_host(&in, mem, len);
	ck_assert_msg(r0 == c->expected,
		      "edge_cases.c:%d: got 0x%016llx, want 0x%016llx", c->line,
		      (unsigned long long)r0, (unsigned long long)c->expected);
}
END_TEST

/* One atomic operation on memory: the new memory and what r0 sees. */
static void check_atomic(uint8_t size, int32_t op, uint64_t mem_in,
			 uint64_t src, uint64_t r0_in, uint64_t want_mem,
			 uint64_t want_r0)
{
	/* r0 is cmpxchg's result, or else the (fetched) src register. */
	struct bpf_insn p[] = {
		LDDW(2, src), LDDW(0, r0_in), ATOMIC(size, 1, 2, 0, op),
		MOV64_REG(0, 2), EXIT,
	};
	struct jit_input in = test_input("t", p, ARRAY_SIZE(p), EGPU_HELPERS_GPU);
	uint64_t mem = mem_in, r0;

	if (op == BPF_CMPXCHG)
		p[5] = I(EXIT);
	r0 = run_host(&in, &mem, sizeof(mem));
	ck_assert_msg(mem == want_mem, "op 0x%x size %d: memory 0x%llx, want 0x%llx",
		      op, size, (unsigned long long)mem,
		      (unsigned long long)want_mem);
	ck_assert_msg(r0 == want_r0, "op 0x%x size %d: r0 0x%llx, want 0x%llx", op,
		      size, (unsigned long long)r0, (unsigned long long)want_r0);
}

START_TEST(atomic_rmw)
{
	const uint64_t m = 0xf0f0f0f0f0f0f0f0, s = 0x0ff000000000ff0f;
	const struct {
		int32_t op;
		uint64_t r;
	} ops[] = {
		{ BPF_ADD, m + s }, { BPF_OR, m | s },
		{ BPF_AND, m & s }, { BPF_XOR, m ^ s },
	};

	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		uint64_t r32 = (m & 0xffffffff00000000) | (uint32_t)ops[i].r;

		check_atomic(BPF_DW, ops[i].op, m, s, 0, ops[i].r, s);
		check_atomic(BPF_DW, ops[i].op | BPF_FETCH, m, s, 0, ops[i].r, m);
		check_atomic(BPF_W, ops[i].op, m, s, 0, r32, s);
		/* 32-bit fetch zero-extends the old value into src. */
		check_atomic(BPF_W, ops[i].op | BPF_FETCH, m, s, 0, r32,
			     (uint32_t)m);
	}
	check_atomic(BPF_DW, BPF_XCHG, m, s, 0, s, m);
	check_atomic(BPF_W, BPF_XCHG, m, s, 0,
		     (m & 0xffffffff00000000) | (uint32_t)s, (uint32_t)m);
}
END_TEST

START_TEST(atomic_cmpxchg)
{
	const uint64_t m = 0x1111111122222222, s = 0x3333333344444444;

	/* Success: r0 equals memory; memory takes src, r0 the old value. */
	check_atomic(BPF_DW, BPF_CMPXCHG, m, s, m, s, m);
	/* Failure: memory unchanged, r0 = memory. */
	check_atomic(BPF_DW, BPF_CMPXCHG, m, s, 7, m, m);
	/* 32 bits compare the low half of r0 only and zero-extend. */
	check_atomic(BPF_W, BPF_CMPXCHG, m, s, 0xffffffff22222222,
		     0x1111111144444444, 0x22222222);
	check_atomic(BPF_W, BPF_CMPXCHG, m, s, 0x22222223, m, 0x22222222);
}
END_TEST

START_TEST(stack_frames_per_call)
{
	/* main fills its frame, calls sub which fills its own, and checks. */
	const struct bpf_insn p[] = {
		MOV64(1, 0x5a),
		STX(BPF_DW, 10, 1, -512),
		STX(BPF_DW, 10, 1, -8),
		MOV64(6, 1), MOV64(7, 2), MOV64(8, 3), MOV64(9, 4),
		CALL_LOCAL(9),
		LDX(BPF_DW, 1, 10, -512), LDX(BPF_DW, 2, 10, -8),
		ALU64_REG(BPF_ADD, 1, 2), ALU64_REG(BPF_ADD, 1, 6),
		ALU64_REG(BPF_ADD, 1, 7), ALU64_REG(BPF_ADD, 1, 8),
		ALU64_REG(BPF_ADD, 1, 9), ALU64_REG(BPF_ADD, 0, 1), EXIT,
		/* sub */
		MOV64(1, -1), STX(BPF_DW, 10, 1, -512), STX(BPF_DW, 10, 1, -8),
		MOV64(6, 0), MOV64(7, 0), MOV64(8, 0), MOV64(9, 0),
		MOV64(0, 0x1000), EXIT,
	};

	ck_assert_uint_eq(RUN(p, NULL, 0), 0x1000 + 0x5a * 2 + 1 + 2 + 3 + 4);
}
END_TEST

START_TEST(nested_calls)
{
	/* main -> a -> b, each adding to r1 and returning it. */
	const struct bpf_insn p[] = {
		MOV64(1, 1), CALL_LOCAL(1), EXIT,
		ALU64_IMM(BPF_ADD, 1, 10), CALL_LOCAL(1), EXIT,
		ALU64_IMM(BPF_ADD, 1, 100), MOV64_REG(0, 1), EXIT,
	};

	ck_assert_uint_eq(RUN(p, NULL, 0), 111);
}
END_TEST

/* A fake map table: an array map, a GPU array map, a hash map. */
static uint64_t array_values[4] = { 10, 11, 12, 13 };
static uint64_t gpu_values[2] = { 20, 21 };
static struct host_map *hash;

static struct jit_map test_maps[3];

static void setup_maps(void)
{
	test_maps[0] = (struct jit_map){
		.addr = 0x1000, .value_addr = (uintptr_t)array_values,
		.type = EGPU_MAP_ARRAY, .key_size = 4, .value_size = 8,
		.max_entries = 4,
	};
	test_maps[1] = (struct jit_map){
		.addr = 0x2000, .value_addr = (uintptr_t)gpu_values,
		.type = EGPU_MAP_GPU_ARRAY, .key_size = 4, .value_size = 8,
		.max_entries = 2,
	};
	struct map_spec spec = { .name = "hash", .type = EGPU_MAP_HASH,
				     .key_size = 4, .value_size = 8,
				     .max_entries = 8 };

	host_map_free(hash);
	ck_assert_int_eq(host_map_new(&spec, &hash), 0);
	test_maps[2] = (struct jit_map){
		.addr = (uintptr_t)hash, .type = EGPU_MAP_HASH, .key_size = 4,
		.value_size = 8, .max_entries = 8,
	};
}

static uint64_t run_maps(const struct bpf_insn *p, size_t n)
{
	struct jit_input in = test_input("t", p, n, EGPU_HELPERS_GPU);

	in.maps = test_maps;
	in.map_cnt = ARRAY_SIZE(test_maps);
	return run_host(&in, NULL, 0);
}

#define RUN_MAPS(p) run_maps(p, ARRAY_SIZE(p))

START_TEST(lddw_map_forms)
{
	const struct bpf_insn addr[] = {
		LDDW_SRC(0, BPF_PSEUDO_MAP_IDX, 1, 0), EXIT,
	};
	const struct bpf_insn value[] = {
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX_VALUE, 0, 16),
		LDX(BPF_DW, 0, 1, 0), EXIT,
	};

	ck_assert_uint_eq(RUN_MAPS(addr), 0x2000);
	ck_assert_uint_eq(RUN_MAPS(value), 12);
}
END_TEST

/* lookup(map, &key) and return the value, or 99 when there is none. */
#define LOOKUP_PROG(map, key)                                                  \
	MOV64(1, key), STX(BPF_W, 10, 1, -4),                                  \
	LDDW_SRC(1, BPF_PSEUDO_MAP_IDX, map, 0), MOV64_REG(2, 10),             \
	ALU64_IMM(BPF_ADD, 2, -4), CALL(HELPER_MAP_LOOKUP), MOV64_REG(1, 0),   \
	MOV64(0, 99), JMP_IMM(BPF_JEQ, 1, 0, 1), LDX(BPF_DW, 0, 1, 0), EXIT

START_TEST(array_lookup_inline)
{
	const struct bpf_insn k2[] = { LOOKUP_PROG(0, 2) };
	const struct bpf_insn k4[] = { LOOKUP_PROG(0, 4) };
	const struct bpf_insn gpu1[] = { LOOKUP_PROG(1, 1) };
	const struct bpf_insn neg[] = { LOOKUP_PROG(1, -1) };

	ck_assert_uint_eq(RUN_MAPS(k2), 12);
	ck_assert_uint_eq(RUN_MAPS(k4), 99);
	ck_assert_uint_eq(RUN_MAPS(gpu1), 21);
	ck_assert_uint_eq(RUN_MAPS(neg), 99);
}
END_TEST

START_TEST(array_lookup_chosen_at_run_time)
{
	/* r1 is one of two maps depending on r2 (ctx_len): a phi, not a constant. */
	const struct bpf_insn p[] = {
		MOV64(3, 1), STX(BPF_W, 10, 3, -4),
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX, 0, 0),
		JMP_IMM(BPF_JEQ, 2, 0, 2),
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX, 1, 0),
		MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4),
		CALL(HELPER_MAP_LOOKUP), LDX(BPF_DW, 0, 0, 0), EXIT,
	};
	struct jit_input in = test_input("t", p, ARRAY_SIZE(p), EGPU_HELPERS_GPU);
	struct jit_host *jh;

	in.maps = test_maps;
	in.map_cnt = ARRAY_SIZE(test_maps);
	ck_assert_int_eq(jit_host_new(&in, &jh), 0);
	ck_assert_uint_eq(jit_host_call(jh, NULL, 0), 11);
	ck_assert_uint_eq(jit_host_call(jh, NULL, 1), 21);
	jit_host_free(jh);
}
END_TEST

START_TEST(hash_helpers_call_host_maps)
{
	const struct bpf_insn p[] = {
		/* key 7 -> value 0x77, then look it up, delete it, look again */
		MOV64(1, 7), STX(BPF_W, 10, 1, -4),
		MOV64(1, 0x77), STX(BPF_DW, 10, 1, -16),
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX, 2, 0), MOV64_REG(2, 10),
		ALU64_IMM(BPF_ADD, 2, -4), MOV64_REG(3, 10),
		ALU64_IMM(BPF_ADD, 3, -16), MOV64(4, 0),
		CALL(HELPER_MAP_UPDATE), MOV64_REG(6, 0),
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX, 2, 0), MOV64_REG(2, 10),
		ALU64_IMM(BPF_ADD, 2, -4), CALL(HELPER_MAP_LOOKUP),
		LDX(BPF_DW, 7, 0, 0),
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX, 2, 0), MOV64_REG(2, 10),
		ALU64_IMM(BPF_ADD, 2, -4), CALL(HELPER_MAP_DELETE),
		MOV64_REG(8, 0),
		LDDW_SRC(1, BPF_PSEUDO_MAP_IDX, 2, 0), MOV64_REG(2, 10),
		ALU64_IMM(BPF_ADD, 2, -4), CALL(HELPER_MAP_LOOKUP),
		/* r0 = lookup2 | delete << 8 | value << 16 | update << 32 */
		ALU64_IMM(BPF_LSH, 8, 8), ALU64_REG(BPF_OR, 0, 8),
		ALU64_IMM(BPF_LSH, 7, 16), ALU64_REG(BPF_OR, 0, 7),
		ALU64_IMM(BPF_LSH, 6, 32), ALU64_REG(BPF_OR, 0, 6), EXIT,
	};

	ck_assert_uint_eq(RUN_MAPS(p), 0x77ULL << 16);
	ck_assert_uint_eq(hash->count, 0); /* deleted again */
}
END_TEST

START_TEST(helper_clocks_and_ids)
{
	const struct bpf_insn clock[] = {
		CALL(HELPER_KTIME_GET_NS), MOV64_REG(6, 0),
		CALL(HELPER_GLOBALTIMER), ALU64_REG(BPF_SUB, 0, 6),
		/* r0 = (t1 >= t0) && t0 != 0 */
		MOV64(1, 0), JMP_IMM(BPF_JSLT, 0, 0, 2), JMP_IMM(BPF_JEQ, 6, 0, 1),
		MOV64(1, 1), MOV64_REG(0, 1), EXIT,
	};
	const struct bpf_insn pid[] = { CALL(HELPER_GET_PID_TGID), EXIT };
	const struct bpf_insn hw[] = {
		CALL(HELPER_SMID), MOV64_REG(6, 0), CALL(HELPER_WARPID),
		ALU64_REG(BPF_OR, 6, 0), CALL(HELPER_LANEID),
		ALU64_REG(BPF_OR, 0, 6), CALL(HELPER_MEMBAR),
		ALU64_REG(BPF_OR, 0, 6), EXIT,
	};

	ck_assert_uint_eq(RUN(clock, NULL, 0), 1);
	ck_assert_uint_eq(RUN(pid, NULL, 0) >> 32, (uint64_t)getpid());
	ck_assert_uint_eq(RUN(hw, NULL, 0), 0);
}
END_TEST

/* Call helper @id with r1-r3 = &r10[-8], [-16], [-24]; sum what it wrote. */
#define XYZ_PROG(id)                                                           \
	MOV64(1, 77), STX(BPF_DW, 10, 1, -8), STX(BPF_DW, 10, 1, -16),         \
	STX(BPF_DW, 10, 1, -24), MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -8),  \
	MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -16), MOV64_REG(3, 10),        \
	ALU64_IMM(BPF_ADD, 3, -24), CALL(id), LDX(BPF_DW, 1, 10, -8),          \
	LDX(BPF_DW, 2, 10, -16), LDX(BPF_DW, 3, 10, -24),                      \
	ALU64_REG(BPF_ADD, 0, 1), ALU64_REG(BPF_ADD, 0, 2),                    \
	ALU64_REG(BPF_ADD, 0, 3), EXIT

START_TEST(helper_grid_is_one_thread)
{
	const struct bpf_insn bidx[] = { XYZ_PROG(HELPER_BLOCK_IDX) };
	const struct bpf_insn tidx[] = { XYZ_PROG(HELPER_THREAD_IDX) };
	const struct bpf_insn bdim[] = { XYZ_PROG(HELPER_BLOCK_DIM) };
	const struct bpf_insn gdim[] = { XYZ_PROG(HELPER_GRID_DIM) };

	ck_assert_uint_eq(RUN(bidx, NULL, 0), 0);
	ck_assert_uint_eq(RUN(tidx, NULL, 0), 0);
	ck_assert_uint_eq(RUN(bdim, NULL, 0), 3);
	ck_assert_uint_eq(RUN(gdim, NULL, 0), 3);
}
END_TEST

START_TEST(helper_exit_thread_ends_program)
{
	const struct bpf_insn direct[] = {
		ST(BPF_DW, 1, 0, 1), CALL(HELPER_EXIT_THREAD),
		ST(BPF_DW, 1, 0, 2), MOV64(0, 7), EXIT,
	};
	const struct bpf_insn nested[] = {
		MOV64_REG(6, 1), CALL_LOCAL(3), ST(BPF_DW, 6, 0, 3), MOV64(0, 7),
		EXIT,
		/* sub -> sub2 -> exit_thread */
		CALL_LOCAL(1), EXIT,
		ST(BPF_DW, 1, 0, 1), CALL(HELPER_EXIT_THREAD), MOV64(0, 5), EXIT,
	};
	uint64_t mem = 0;

	ck_assert_uint_eq(RUN(direct, &mem, sizeof(mem)), 0);
	ck_assert_uint_eq(mem, 1);
	mem = 0;
	ck_assert_uint_eq(RUN(nested, &mem, sizeof(mem)), 0);
	ck_assert_uint_eq(mem, 1);
}
END_TEST

START_TEST(conformance_unwind_zero_ends_program)
{
	const struct bpf_insn p[] = {
		CALL_LOCAL(2), MOV64(0, 9), EXIT,
		MOV64(1, 0), CALL(5), MOV64(0, 3), EXIT,
	};
	struct jit_input in = test_input("t", p, ARRAY_SIZE(p),
					 EGPU_HELPERS_CONFORMANCE);

	ck_assert_uint_eq(run_host(&in, NULL, 0), 0);
}
END_TEST

START_TEST(callx_by_register)
{
	const struct bpf_insn pid[] = {
		MOV64(8, HELPER_GET_PID_TGID),
		INSN(BPF_JMP | BPF_CALL | BPF_X, 8, 0, 0, 0), EXIT,
	};
	const struct bpf_insn unknown[] = {
		MOV64(0, 5), MOV64(8, 9999),
		INSN(BPF_JMP | BPF_CALL | BPF_X, 8, 0, 0, 0), MOV64(0, 4), EXIT,
	};

	ck_assert_uint_eq(RUN(pid, NULL, 0) >> 32, (uint64_t)getpid());
	ck_assert_uint_eq(RUN(unknown, NULL, 0), 0);
}
END_TEST

START_TEST(helper_output)
{
	static const char fmt[] = "v=%d u=%u x=%llx";
	const struct bpf_insn printk[] = {
		LDDW(1, (uintptr_t)fmt), MOV64(2, sizeof(fmt)), MOV64(3, -1),
		MOV64(4, 7), MOV64(5, 255), CALL(HELPER_TRACE_PRINTK), EXIT,
	};
	const struct bpf_insn puts[] = {
		LDDW(1, (uintptr_t)fmt), CALL(HELPER_PUTS), EXIT,
	};

	ck_assert_uint_eq(RUN(printk, NULL, 0), strlen("v=-1 u=7 x=ff"));
	ck_assert_uint_eq(RUN(puts, NULL, 0), 0);
}
END_TEST

static void check_format(const char *fmt, size_t len, const char *want)
{
	const uint64_t args[3] = { (uint64_t)-2, 0x1234, (uintptr_t)"str" };
	struct strbuf sb;

	sb_init(&sb);
	host_format(&sb, fmt, len, args, 3);
	ck_assert_str_eq(sb.buf ? sb.buf : "", want);
	sb_free(&sb);
}

START_TEST(printk_format)
{
	check_format("%d %x %s", 64, "-2 1234 str");
	check_format("%ld|%5u|%-4s|", 64, "-2| 4660|str |");
	check_format("%lu", 64, "18446744073709551614");
	check_format("%hhx %hd", 64, "fe 4660");
	check_format("100%% %q %d", 64, "100% %q -2");
	check_format("%d %d %s %d", 64, "-2 4660 str %d");
	check_format("abc%d", 3, "abc");
	check_format("%", 64, "%");
}
END_TEST

static void check_rejected(const struct bpf_insn *p, size_t n, int want,
			   const char *msg)
{
	struct jit_input in = test_input("bad", p, n, EGPU_HELPERS_GPU);
	struct jit_host *jh = NULL;
	char *ptx = NULL;

	in.maps = test_maps;
	in.map_cnt = ARRAY_SIZE(test_maps);
	ck_assert_int_eq(jit_host_new(&in, &jh), want);
	ck_assert_ptr_null(jh);
	ck_assert_msg(strstr(egpu_errmsg(), msg), "message \"%s\" lacks \"%s\"",
		      egpu_errmsg(), msg);
	ck_assert_int_eq(jit_ptx(&in, "sm_90", false, &ptx, NULL, NULL), want);
	ck_assert_ptr_null(ptx);
}

#define REJECT(msg, ...)                                                       \
	do {                                                                   \
		const struct bpf_insn p_[] = { __VA_ARGS__ };                  \
		check_rejected(p_, ARRAY_SIZE(p_), EGPU_EJIT, msg);            \
	} while (0)

START_TEST(rejections)
{
	REJECT("bad: insn 1: lddw with src 1", MOV64(0, 0),
	       LDDW_SRC(1, BPF_PSEUDO_MAP_FD, 3, 0), EXIT);
	REJECT("insn 0: lddw with src 2", LDDW_SRC(1, 2, 0, 0), EXIT);
	REJECT("insn 0: lddw with src 3", LDDW_SRC(1, 3, 0, 0), EXIT);
	REJECT("insn 0: lddw with src 4", LDDW_SRC(1, 4, 0, 0), EXIT);
	REJECT("insn 0: lddw with unknown src 7", LDDW_SRC(1, 7, 0, 0), EXIT);
	REJECT("refers to map 3; the program has 3 maps",
	       LDDW_SRC(1, BPF_PSEUDO_MAP_IDX, 3, 0), EXIT);
	REJECT("lacks its second slot", MOV64(0, 0), JA(0),
	       INSN(BPF_LD | BPF_IMM | BPF_DW, 0, 0, 0, 0));
	REJECT("insn 0: unknown ALU opcode 0xf7", INSN(0xf7, 0, 0, 0, 0), EXIT);
	REJECT("insn 0: unknown jump opcode 0xe5", INSN(0xe5, 0, 0, 0, 0), EXIT);
	REJECT("insn 0: unknown jump opcode 0x96", INSN(0x96, 0, 0, 0, 0), EXIT);
	REJECT("leaves the subprogram", JA(5), EXIT);
	REJECT("leaves the subprogram", JA(-2), EXIT);
	REJECT("into the middle of an lddw", JA(1), LDDW(0, 1), EXIT);
	REJECT("falls off its end", MOV64(0, 0));
	REJECT("falls off its end", MOV64(0, 0), EXIT, MOV64(0, 1));
	REJECT("r10 is read-only", MOV64(10, 0), EXIT);
	REJECT("r10 is read-only", ATOMIC(BPF_DW, 1, 10, 0, BPF_ADD | BPF_FETCH),
	       EXIT);
	REJECT("invalid register r11", MOV64(11, 0), EXIT);
	REJECT("kfunc calls are not supported",
	       INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 1), EXIT);
	REJECT("unknown helper 9999", CALL(9999), EXIT);
	REJECT("call target 5 is outside", CALL_LOCAL(4), EXIT);
	REJECT("legacy packet access", INSN(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 0),
	       EXIT);
	REJECT("ldsx of 8 bytes", LDSX(BPF_DW, 0, 1, 0), EXIT);
	REJECT("invalid movsx width 32",
	       INSN(BPF_ALU | BPF_MOV | BPF_X, 0, 1, 32, 0), EXIT);
	REJECT("movsx needs a register", INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 8, 1),
	       EXIT);
	REJECT("invalid div/mod offset 2",
	       INSN(BPF_ALU64 | BPF_DIV | BPF_K, 0, 0, 2, 1), EXIT);
	REJECT("invalid byte swap width 8", INSN(BPF_ALU | BPF_END, 0, 0, 0, 8),
	       EXIT);
	REJECT("invalid bswap opcode 0xdf", INSN(0xdf, 0, 0, 0, 16), EXIT);
	REJECT("unknown atomic operation 0x10",
	       ATOMIC(BPF_DW, 1, 2, 0, BPF_SUB), EXIT);
	REJECT("atomic operations are 4 or 8 bytes",
	       ATOMIC(BPF_B, 1, 2, 0, BPF_ADD), EXIT);
	REJECT("unknown store opcode", INSN(BPF_STX | BPF_IND | BPF_W, 1, 2, 0, 0),
	       EXIT);
	REJECT("has no directly addressable value",
	       LDDW_SRC(1, BPF_PSEUDO_MAP_IDX_VALUE, 2, 0), EXIT);
}
END_TEST

/* Ring buffer and print helpers included: every helper translates for the CPU. */
START_TEST(every_helper_translates_for_the_host)
{
	int seen = 0;

	for (int32_t id = 0; id < 1024; id++) {
		const struct bpf_insn p[] = { CALL(id), EXIT };
		struct jit_input in = test_input("h", p, ARRAY_SIZE(p),
						 EGPU_HELPERS_GPU);
		struct jit_host *jh = NULL;

		if (!helper_find(id, EGPU_HELPERS_GPU))
			continue;
		seen++;
		ck_assert_msg(!jit_host_new(&in, &jh), "helper %d: %s", id,
			      egpu_errmsg());
		jit_host_free(jh);
	}
	ck_assert_int_ge(seen, 23);
}
END_TEST

START_TEST(invalid_input)
{
	const struct bpf_insn p[] = { MOV64(0, 0), EXIT };
	struct jit_input in = test_input("ok", p, 0, EGPU_HELPERS_GPU);
	struct jit_host *jh;
	char *ptx;

	ck_assert_int_eq(jit_host_new(&in, &jh), EGPU_EINVAL);
	in.insn_cnt = 2;
	in.name = "1bad";
	ck_assert_int_eq(jit_host_new(&in, &jh), EGPU_EINVAL);
	in.name = NULL;
	ck_assert_int_eq(jit_host_new(&in, &jh), EGPU_EINVAL);
	in.name = "ok";
	in.helpers = 7;
	ck_assert_int_eq(jit_host_new(&in, &jh), EGPU_EINVAL);
	in.helpers = EGPU_HELPERS_GPU;
	ck_assert_int_eq(jit_host_new(&in, NULL), EGPU_EINVAL);
	ck_assert_int_eq(jit_host_new(NULL, &jh), EGPU_EINVAL);
	ck_assert_int_eq(jit_ptx(&in, "sm_9x", false, &ptx, NULL, NULL), EGPU_EINVAL);
	ck_assert_int_eq(jit_ptx(&in, "compute_90", false, &ptx, NULL, NULL),
			 EGPU_EINVAL);
	jit_host_free(NULL);
}
END_TEST

static Suite *jit_suite(void)
{
	Suite *s = suite_create("jit_host");
	TCase *conf = tcase_create("conformance");
	TCase *edge = tcase_create("edge_cases");
	TCase *tc = tcase_create("semantics");

	tcase_add_loop_test(conf, conformance_row, 0, (int)vector_cnt);
	tcase_add_loop_test(edge, edge_case, 0, (int)edge_case_cnt);
	tcase_add_checked_fixture(tc, setup_maps, NULL);
	tcase_add_test(tc, atomic_rmw);
	tcase_add_test(tc, atomic_cmpxchg);
	tcase_add_test(tc, stack_frames_per_call);
	tcase_add_test(tc, nested_calls);
	tcase_add_test(tc, lddw_map_forms);
	tcase_add_test(tc, array_lookup_inline);
	tcase_add_test(tc, array_lookup_chosen_at_run_time);
	tcase_add_test(tc, hash_helpers_call_host_maps);
	tcase_add_test(tc, helper_clocks_and_ids);
	tcase_add_test(tc, helper_grid_is_one_thread);
	tcase_add_test(tc, helper_exit_thread_ends_program);
	tcase_add_test(tc, conformance_unwind_zero_ends_program);
	tcase_add_test(tc, callx_by_register);
	tcase_add_test(tc, helper_output);
	tcase_add_test(tc, printk_format);
	tcase_add_test(tc, rejections);
	tcase_add_test(tc, every_helper_translates_for_the_host);
	tcase_add_test(tc, invalid_input);
	suite_add_tcase(s, conf);
	suite_add_tcase(s, edge);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{

	vector_cnt = vectors_with_result(&vectors);
	return tu_run_suite(jit_suite(), false);
}
