/* SPDX-License-Identifier: MIT */
/*
 * Warp-aggregated atomics, bit-exact: the IR the GPU gets (warp_agg.c),
 * run on the CPU's 32-lane warp model (lib/jit/host_warp.c) with redux
 * (sm_80 on) and with the shuffle scan (sm_70/75), against the lanes'
 * atomics done one by one in ascending lane order. Every op, 32 and 64
 * bits, with and without fetch; full, partial and divergent warps, lanes
 * that return before the atomic; one address, a few, one per lane; equal
 * and different operands.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "jit_test.h"
#include "test_util.h"

struct lane_ctx {
	uint64_t addr, val, skip;
};

static const int ops[] = { BPF_ADD, BPF_OR, BPF_AND, BPF_XOR };
static const uint32_t masks[] = { 0xffffffff, 0x0000ffff, 0x00001fff,
				  0x5a5a5a5a, 0x80000001, 1u << 7 };

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t apply(int op, uint64_t a, uint64_t b)
{
	switch (op) {
	case BPF_ADD:
		return a + b;
	case BPF_OR:
		return a | b;
	case BPF_AND:
		return a & b;
	default:
		return a ^ b;
	}
}

/* r0: the fetched value, or the operand without fetch; lanes with skip
 * set return 0xdead before the atomic. */
static struct jit_host *translate(int op, int size, bool fetch, int model)
{
	const struct bpf_insn p[] = {
		LDX(BPF_DW, 6, 1, 16), JMP_IMM(BPF_JNE, 6, 0, 6),
		LDX(BPF_DW, 2, 1, 0), LDX(BPF_DW, 3, 1, 8),
		ATOMIC(size, 2, 3, 0, op | (fetch ? BPF_FETCH : 0)),
		MOV64_REG(0, 3), EXIT, EXIT,
		MOV64(0, 0xdead), EXIT,
	};
	struct jit_input in = test_input("warp", p, ARRAY_SIZE(p), EGPU_HELPERS_GPU);
	struct jit_host *jh;

	in.warp_model = model;
	ck_assert_int_eq(jit_host_new(&in, &jh), 0);
	return jh;
}

/* One warp: lanes' contexts from @seed, the run checked against serial. */
static void check_run(struct jit_host *jh, int op, int size, bool fetch,
		      uint32_t lanes, int addrs, bool same_val, uint64_t seed)
{
	uint64_t mem[8], want[8], r0[32], s = seed, v = 0;
	uint64_t width_mask = size == BPF_DW ? UINT64_MAX : UINT32_MAX;
	struct lane_ctx c[32];
	void *ctx[32];

	for (int i = 0; i < 8; i++)
		mem[i] = want[i] = rnd(&s) & width_mask;
	for (int i = 0; i < 32; i++) {
		unsigned k = addrs == 32 ? (unsigned)i % 8 : (unsigned)(rnd(&s) % (uint64_t)addrs);

		if (!same_val || !i)
			v = rnd(&s) & width_mask;
		c[i] = (struct lane_ctx){ (uintptr_t)&mem[k], v, rnd(&s) % 4 == 0 && seed & 1 };
		ctx[i] = &c[i];
	}
	ck_assert_int_eq(jit_host_call_warp(jh, ctx, sizeof(c[0]), lanes, r0), 0);
	for (int i = 0; i < 32; i++) {
		uint64_t *w, old;

		if (!(lanes >> i & 1))
			continue;
		if (c[i].skip) {
			ck_assert_uint_eq(r0[i], 0xdead);
			continue;
		}
		w = &want[(uint64_t *)(uintptr_t)c[i].addr - mem];
		old = *w;
		*w = apply(op, old, c[i].val) & width_mask;
		ck_assert_msg(r0[i] == (fetch ? old : c[i].val),
			      "op %#x size %d fetch %d lanes %#x addrs %d lane %d: r0 %#llx, want %#llx",
			      op, size, fetch, lanes, addrs, i,
			      (unsigned long long)r0[i],
			      (unsigned long long)(fetch ? old : c[i].val));
	}
	for (int i = 0; i < 8; i++)
		ck_assert_msg(mem[i] == want[i],
			      "op %#x size %d fetch %d lanes %#x addrs %d: word %d %#llx, want %#llx",
			      op, size, fetch, lanes, addrs, i,
			      (unsigned long long)mem[i], (unsigned long long)want[i]);
}

/* _i: op, size, fetch and model from the loop index. */
START_TEST(aggregated_matches_serial)
{
	int op = ops[_i % 4], size = _i / 4 % 2 ? BPF_W : BPF_DW;
	bool fetch = _i / 8 % 2;
	int model = _i / 16 ? JIT_WARP_SCAN : JIT_WARP_REDUX;
	static const int addrs[] = { 1, 3, 5, 32 };
	struct jit_host *jh = translate(op, size, fetch, model);
	uint64_t seed = 0x9e3779b97f4a7c15ull + (uint64_t)_i;

	for (size_t m = 0; m < ARRAY_SIZE(masks); m++)
		for (size_t a = 0; a < ARRAY_SIZE(addrs); a++)
			for (int same = 0; same < 2; same++)
				check_run(jh, op, size, fetch, masks[m], addrs[a],
					  same, seed += 0x1234567);
	jit_host_free(jh);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("simt_model");
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, aggregated_matches_serial, 0, 32);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
