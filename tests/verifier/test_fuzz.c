/* SPDX-License-Identifier: MIT */
/*
 * Soundness: random programs and mutations of the corpus go through the
 * verifier, and every accepted one runs in the reference interpreter
 * (ref_interp.c) on random inputs, which checks each promise the verifier
 * makes. Fixed seeds, bounded counts: the same programs on every run.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "elf_progs.h"
#include "gen.h"
#include "raw_cases.h"
#include "ref_interp.h"
#include "verifier/verifier.h"
#include "test_util.h"

#define RANDOM_PROGRAMS TU_ROUNDS(3000)
#define LOOP_PROGRAMS TU_ROUNDS(3000)
#define MUTANTS TU_ROUNDS(6000)
#define RUNS_PER_PROGRAM 6
#define GARBAGE_PROGRAMS TU_ROUNDS(20000)

struct subject {
	const char *name;
	const struct bpf_insn *insns;
	size_t cnt;
	const struct map_spec *maps;
	size_t map_cnt;
	int attach, abi;
	uint32_t ctx_size;
	bool writable;
};

/* Steps a run of a program with a proven loop gets (proven_long_run). */
#define PROVEN_LOOP_STEPS 1000000

struct tally {
	int programs, accepted, runs, violations;
	int long_runs; /* stopped in a loop proven to end (proven_long_run) */
};

static const char *const objects[] = {
	"maps", "loops", "calls", "ctx", "ringbuf", "helpers", "probes",
	"accumulate", "counted",
};

static struct elf_progs elf[ARRAY_SIZE(objects)];
static struct subject seeds[ARRAY_SIZE(raw_cases) + 256];
static size_t nseeds;

static void load_seeds(void)
{
	nseeds = 0;
	for (size_t i = 0; i < ARRAY_SIZE(raw_cases); i++) {
		const struct raw_case *c = &raw_cases[i];

		seeds[nseeds++] = (struct subject){
			c->name, c->insns, c->cnt, raw_maps,
			ARRAY_SIZE(raw_maps), c->attach, c->abi,
			c->ctx_size, c->writable,
		};
	}
	for (size_t o = 0; o < ARRAY_SIZE(objects); o++) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%s.o", EGPU_TEST_BUILD,
			 objects[o]);
		ck_assert_int_eq(elf_progs_load(path, &elf[o]), 0);
		for (size_t i = 0; i < elf[o].prog_cnt &&
		     nseeds < ARRAY_SIZE(seeds); i++) {
			const struct prog_spec *p = &elf[o].progs[i];
			bool run = !strncmp(p->section, "run/", 4);

			seeds[nseeds++] = (struct subject){
				p->name, p->insns, p->insn_cnt, elf[o].maps,
				elf[o].map_cnt, p->attach, EGPU_HELPERS_GPU,
				run ? (uint32_t)atoi(p->section + 4) : 0, run,
			};
		}
	}
}

static void free_seeds(void)
{
	for (size_t o = 0; o < ARRAY_SIZE(objects); o++)
		elf_progs_free(&elf[o]);
}

/* Every other program stores a state at each prune point, to stress pruning. */
static int verify(const struct subject *s, bool all_states,
		  struct verifier_stats *stats)
{
	struct prog_spec spec = {
		.name = (char *)s->name, .insns = (struct bpf_insn *)s->insns,
		.insn_cnt = s->cnt,
	};
	struct verifier_opts o = {
		.abi = s->abi, .attach = s->attach, .ctx_size = s->ctx_size,
		.ctx_writable = s->writable, .max_insns = 100000,
		.all_states = all_states,
	};

	return verifier_run(&spec, s->maps, s->map_cnt, &o, stats);
}

static void report(const struct subject *s, const char *why)
{
	struct prog_spec spec = {
		.name = (char *)s->name, .insns = (struct bpf_insn *)s->insns,
		.insn_cnt = s->cnt,
	};
	struct strbuf sb;

	sb_init(&sb);
	tu_verifier_dump(&sb, &spec, s->maps, s->map_cnt, s->abi);
	fprintf(stderr, "UNSOUND: '%s' (attach %d) accepted, but %s\n%s",
		s->name, s->attach, why, sb.buf ? sb.buf : "");
	sb_free(&sb);
}

/*
 * Whether the interpreter stopped a run of a program whose loops the
 * verifier proved to end by a counter (within 2^32 iterations, which the
 * interpreter's step limit does not reach): a long run, not a hang.
 */
static bool proven_long_run(const struct ref_env *env,
			    const struct verifier_stats *vs)
{
	return vs->loop_widenings &&
	       !strncmp(ref_env_violation(env), "no exit after", 13);
}

/* Run an accepted program; count what the interpreter finds. */
static void run_accepted(const struct subject *s, uint64_t seed,
			 const struct verifier_stats *vs, struct tally *t)
{
	struct ref_env *env = ref_env_new(s->maps, s->map_cnt, s->attach,
					  s->ctx_size, s->writable, s->abi,
					  seed);

	ck_assert_ptr_nonnull(env);
	/* a proven loop may run 2^32 times: stop it sooner (the sanitizer
	 * build runs the interpreter slowly) */
	if (vs->loop_widenings)
		ref_env_set_step_limit(env, PROVEN_LOOP_STEPS);
	for (int r = 0; r < RUNS_PER_PROGRAM; r++) {
		uint64_t r0;

		t->runs++;
		if (ref_run(env, s->insns, s->cnt, &r0)) {
			if (proven_long_run(env, vs)) {
				t->long_runs++;
				continue;
			}
			if (!t->violations)
				report(s, ref_env_violation(env));
			t->violations++;
			break;
		}
	}
	ref_env_free(env);
}

static void try_subject(const struct subject *s, uint64_t seed,
			struct tally *t)
{
	struct verifier_stats vs;

	t->programs++;
	if (verify(s, t->programs % 2, &vs))
		return;
	t->accepted++;
	run_accepted(s, seed, &vs, t);
}

START_TEST(accepted_corpus_runs_clean)
{
	struct tally t = { 0 };

	load_seeds();
	for (size_t i = 0; i < nseeds; i++)
		try_subject(&seeds[i], 0x1234 + i, &t);
	printf("corpus: %d programs, %d accepted, %d runs (%d stopped in "
	       "proven loops), %d violations\n", t.programs, t.accepted,
	       t.runs, t.long_runs, t.violations);
	ck_assert_int_eq(t.violations, 0);
	ck_assert_int_gt(t.accepted, 80);
	free_seeds();
}
END_TEST

START_TEST(mutants_are_sound)
{
	struct gen g = { .rng = 0x5eed5eed5eedULL };
	struct tally t = { 0 };

	load_seeds();
	for (int i = 0; i < MUTANTS; i++) {
		const struct subject *seed = &seeds[gen_rand(&g) % nseeds];
		struct subject s = *seed;

		gen_mutate(&g, seed->insns, seed->cnt);
		s.insns = g.insns;
		s.cnt = g.cnt;
		try_subject(&s, gen_rand(&g), &t);
	}
	printf("mutants: %d programs, %d accepted, %d runs (%d stopped in "
	       "proven loops), %d violations\n", t.programs, t.accepted,
	       t.runs, t.long_runs, t.violations);
	ck_assert_int_eq(t.violations, 0);
	ck_assert_int_gt(t.accepted, MUTANTS / 10);
	free_seeds();
}
END_TEST

static const int attach_points[] = {
	EGPU_ATTACH_NONE, EGPU_ATTACH_ENTRY, EGPU_ATTACH_EXIT, EGPU_ATTACH_MEM,
};

START_TEST(random_programs_are_sound)
{
	struct gen g = { .rng = 0xfeedbeefULL, .ring_map = M_RING,
			 .kv_maps = { M_COUNTS, M_ARR, M_PT, M_DATA },
			 .nkv = 4 };
	struct tally t = { 0 };

	for (int i = 0; i < RANDOM_PROGRAMS; i++) {
		struct subject s = {
			"random", g.insns, 0, raw_maps, ARRAY_SIZE(raw_maps),
			attach_points[gen_rand(&g) % 4], EGPU_HELPERS_GPU, 24,
			true,
		};

		gen_program(&g);
		s.cnt = g.cnt;
		try_subject(&s, gen_rand(&g), &t);
	}
	printf("random: %d programs, %d accepted, %d runs, %d violations\n",
	       t.programs, t.accepted, t.runs, t.violations);
	ck_assert_int_eq(t.violations, 0);
	ck_assert_int_gt(t.accepted, RANDOM_PROGRAMS / 20);
}
END_TEST

/* Loops whose pruning ignores values that do not matter (demand.c). */
START_TEST(accumulating_loops_are_sound)
{
	struct gen g = { .rng = 0xacc0ULL, .ring_map = M_RING,
			 .kv_maps = { M_COUNTS, M_ARR, M_PT, M_DATA },
			 .nkv = 4 };
	struct tally t = { 0 };

	for (int i = 0; i < LOOP_PROGRAMS; i++) {
		struct subject s = {
			"loop", g.insns, 0, raw_maps, ARRAY_SIZE(raw_maps),
			attach_points[gen_rand(&g) % 4], EGPU_HELPERS_GPU, 24,
			true,
		};

		gen_loop_program(&g);
		s.cnt = g.cnt;
		try_subject(&s, gen_rand(&g), &t);
	}
	printf("loops: %d programs, %d accepted, %d runs, %d violations\n",
	       t.programs, t.accepted, t.runs, t.violations);
	ck_assert_int_eq(t.violations, 0);
	ck_assert_int_gt(t.accepted, LOOP_PROGRAMS / 20);
}
END_TEST

/* Any bytes at all: refused or accepted, never a crash (run under ASan). */
START_TEST(garbage_does_not_crash)
{
	struct gen g = { .rng = 0xbadc0deULL };
	struct tally t = { 0 };

	for (int i = 0; i < GARBAGE_PROGRAMS; i++) {
		struct subject s = {
			"garbage", g.insns, 1 + gen_rand(&g) % 64, raw_maps,
			ARRAY_SIZE(raw_maps), (int)(gen_rand(&g) % 4),
			EGPU_HELPERS_GPU, 16, true,
		};

		for (size_t k = 0; k < s.cnt; k++) {
			uint64_t r = gen_rand(&g);

			memcpy(&g.insns[k], &r, sizeof(r));
			/* favour real opcodes so that some programs get far */
			if (k % 2)
				g.insns[k].code = (uint8_t)(0x07 + 8 * (r % 30));
		}
		g.insns[s.cnt - 1] = (struct bpf_insn)EXIT();
		try_subject(&s, gen_rand(&g), &t);
	}
	printf("garbage: %d programs, %d accepted, %d runs, %d violations\n",
	       t.programs, t.accepted, t.runs, t.violations);
	ck_assert_int_eq(t.violations, 0);
	ck_assert_int_eq(t.programs, GARBAGE_PROGRAMS);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verifier_fuzz");
	TCase *tc = tcase_create("fuzz");

	tcase_add_test(tc, accepted_corpus_runs_clean);
	tcase_add_test(tc, mutants_are_sound);
	tcase_add_test(tc, random_programs_are_sound);
	tcase_add_test(tc, accumulating_loops_are_sound);
	tcase_add_test(tc, garbage_does_not_crash);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
