/* SPDX-License-Identifier: MIT */
/*
 * Soundness on the CPU back end: programs the verifier accepts (random
 * ones and mutations of the raw corpus) are translated by lib/jit and run
 * with their memory placed against inaccessible guard pages, so an
 * out-of-bounds access faults; where a run is deterministic, r0 must equal
 * the reference interpreter's. Built when lib/jit is part of the tree;
 * programs that call map or ring buffer helpers need host maps and are
 * only checked by test_verifier_fuzz.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/core.h"
#include "egpu/ctx.h"
#include "gen.h"
#include "jit/jit.h"
#include "raw_cases.h"
#include "ref_interp.h"
#include "verifier/verifier.h"
#include "test_util.h"

#define PROGRAMS 2000

/* @len bytes that end exactly where an inaccessible page starts. */
struct guarded {
	uint8_t *map;
	size_t map_len;
	uint8_t *bytes;
};

static void guarded_new(struct guarded *g, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = (len + page - 1) / page * page;

	g->map_len = body + page;
	g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(g->map, MAP_FAILED);
	ck_assert_int_eq(mprotect(g->map + body, page, PROT_NONE), 0);
	g->bytes = g->map + body - ((len + 7) & ~(size_t)7);
}

static void guarded_free(struct guarded *g)
{
	munmap(g->map, g->map_len);
}

static bool needs_host_runtime(const struct bpf_insn *insns, size_t cnt)
{
	for (size_t i = 0; i < cnt; i++) {
		if (bpf_is_lddw(&insns[i]) && insns[i].src_reg)
			return true;
		if (insns[i].code == (BPF_JMP | BPF_CALL) && !insns[i].src_reg)
			return true;
	}
	return false;
}

static bool accepted(const struct bpf_insn *insns, size_t cnt, int attach,
		     uint32_t ctx_size)
{
	struct prog_spec spec = {
		.name = "jit", .insns = (struct bpf_insn *)insns,
		.insn_cnt = cnt,
	};
	struct verifier_opts o = {
		.attach = attach, .ctx_size = ctx_size, .ctx_writable = true,
		.max_insns = 100000,
	};

	/* As the loader does: the structural pass, then the interpreter. */
	return verifier_check_insns(&spec, ARRAY_SIZE(raw_maps), EGPU_HELPERS_GPU) == 0 &&
	       verifier_run(&spec, raw_maps, ARRAY_SIZE(raw_maps), &o, NULL) == 0;
}

/* 1 when run and compared, 0 when skipped. */
static int run_on_cpu(const struct bpf_insn *insns, size_t cnt, int attach,
		      uint32_t ctx_size, uint64_t seed)
{
	struct jit_input in = {
		.name = "fuzz", .insns = insns, .insn_cnt = cnt,
		.helpers = EGPU_HELPERS_GPU, .attach = attach,
	};
	struct ref_env *env;
	struct jit_host *jh;
	/* Attach points fix the ctx size; direct runs choose it. */
	uint32_t mem = attach == EGPU_ATTACH_NONE ? ctx_size :
		       attach == EGPU_ATTACH_MEM ? (uint32_t)sizeof(struct egpu_mem_ctx) :
						   (uint32_t)sizeof(struct egpu_kernel_ctx);
	struct guarded ctx;
	uint64_t want, got;

	if (needs_host_runtime(insns, cnt) ||
	    !accepted(insns, cnt, attach, ctx_size))
		return 0;
	env = ref_env_new(raw_maps, ARRAY_SIZE(raw_maps), attach, ctx_size,
			  true, EGPU_HELPERS_GPU, seed);
	ck_assert_ptr_nonnull(env);
	ck_assert_msg(ref_run(env, insns, cnt, &want) == 0, "interpreter: %s",
		      ref_env_violation(env));
	ck_assert_msg(jit_host_new(&in, &jh) == 0, "jit: %s", egpu_errmsg());
	guarded_new(&ctx, mem);
	if (mem)
		memcpy(ctx.bytes, ref_env_initial_ctx(env), mem);
	got = jit_host_call(jh, mem ? ctx.bytes : NULL, mem);
	if (!ref_env_random(env) && !ref_env_is_address(env, want) && got != want) {
		for (size_t i = 0; i < cnt; i++)
			fprintf(stderr, "%02x %x %x %d %d\n", insns[i].code, insns[i].dst_reg,
				insns[i].src_reg, insns[i].off, insns[i].imm);
		ck_abort_msg("r0 %#llx on the CPU, %#llx in the interpreter (attach %d, ctx %u)",
			     (unsigned long long)got, (unsigned long long)want, attach, mem);
	}
	guarded_free(&ctx);
	jit_host_free(jh);
	ref_env_free(env);
	return 1;
}

START_TEST(accepted_programs_run_on_cpu)
{
	struct gen g = { .rng = 0xc0ffeeULL, .ring_map = -1, .nkv = 0 };
	int ran = 0;

	for (int i = 0; i < PROGRAMS; i++) {
		const struct raw_case *c =
			&raw_cases[gen_rand(&g) % ARRAY_SIZE(raw_cases)];

		if (i % 2) {
			gen_program(&g);
			ran += run_on_cpu(g.insns, g.cnt, EGPU_ATTACH_NONE,
					  24, gen_rand(&g));
		} else {
			gen_mutate(&g, c->insns, c->cnt);
			ran += run_on_cpu(g.insns, g.cnt, c->attach,
					  c->ctx_size, gen_rand(&g));
		}
	}
	printf("%d accepted programs run on the CPU back end\n", ran);
	ck_assert_int_gt(ran, PROGRAMS / 20);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verifier_jit_run");
	TCase *tc = tcase_create("jit");

	tcase_add_test(tc, accepted_programs_run_on_cpu);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
