// SPDX-License-Identifier: MIT
/* The public API without a GPU: contexts, loading, maps, CPU runs, offline
 * instrumentation checked by ptxas, and the errors of each. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/internal.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "test_util.h"

#define API_OBJ EGPU_TEST_BUILD "/api.bpf.o"
#define API_PTX EGPU_TEST_BUILD "/kernels.ptx"
#define MEM_OBJ EGPU_TEST_BUILD "/memprobe.bpf.o"
#define MEM_PTX EGPU_TEST_BUILD "/memkernels.ptx"
#define MIXED_OBJ EGPU_TEST_BUILD "/mixed.bpf.o"
#define UNKNOWN_HELPER_OBJ EGPU_TEST_BUILD "/unknown_helper.bpf.o"

static egpu_ctx *ctx;
static egpu_obj *obj;

static void setup(void)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);

	ctx = egpu_ctx_new(&co);
	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, API_OBJ, NULL);
	ck_assert_msg(obj, "load: %s", egpu_errmsg());
}

static void teardown(void)
{
	egpu_ctx_free(ctx);
}

START_TEST(ctx_opts_checked)
{
	struct egpu_ctx_opts bad = { .sz = 0 };
	struct {
		struct egpu_ctx_opts o;
		uint64_t future;
	} newer = { .o = { .sz = sizeof(newer) }, .future = 1 };

	ck_assert_ptr_null(egpu_ctx_new(&bad));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "sz"));
	ck_assert_ptr_null(egpu_ctx_new(&newer.o));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "does not know"));
	newer.future = 0;
	egpu_ctx_free(egpu_ctx_new(&newer.o));
	EGPU_OPTS(egpu_ctx_opts, sm, .sm = "gfx90a");
	ck_assert_ptr_null(egpu_ctx_new(&sm));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "gfx90a"));
}
END_TEST

/*
 * A field that a newer header put into what is this library's trailing
 * padding (egpu_load_opts and egpu_attach_opts end in a bool) is refused,
 * not ignored; EGPU_OPTS leaves that padding zero.
 */
#define PAD_END(T) offsetofend(struct T, T##__last_field)

START_TEST(opts_padding_checked)
{
	union {
		struct egpu_load_opts o;
		unsigned char b[sizeof(struct egpu_load_opts)];
	} load;
	union {
		struct egpu_attach_opts o;
		unsigned char b[sizeof(struct egpu_attach_opts)];
	} at;
	EGPU_OPTS(egpu_load_opts, full, .name = "n", .helpers = EGPU_HELPERS_GPU,
		  .strict = true);
	egpu_prog *prog = egpu_obj_prog(obj, "on_entry");
	egpu_obj *o;

	ck_assert_uint_lt(PAD_END(egpu_load_opts), sizeof(load.o));
	ck_assert_uint_lt(PAD_END(egpu_attach_opts), sizeof(at.o));
	for (size_t i = PAD_END(egpu_load_opts); i < sizeof(full); i++)
		ck_assert_uint_eq(((unsigned char *)&full)[i], 0);
	memset(&load, 0, sizeof(load));
	load.o.sz = sizeof(load.o);
	o = egpu_load(ctx, API_OBJ, &load.o);
	ck_assert_msg(o, "%s", egpu_errmsg());
	egpu_obj_close(o);
	load.b[PAD_END(egpu_load_opts)] = 1;
	ck_assert_ptr_null(egpu_load(ctx, API_OBJ, &load.o));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "egpu_load"));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "does not know"));

	ck_assert_ptr_nonnull(prog);
	memset(&at, 0, sizeof(at));
	at.o.sz = sizeof(at.o);
	at.b[sizeof(at.o) - 1] = 1;
	ck_assert_ptr_null(egpu_attach_kernel(prog, "saxpy", EGPU_ATTACH_ENTRY,
					      &at.o));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "egpu_attach_kernel"));
}
END_TEST

/*
 * A translation cache lookup allocates nothing: an object's maps reach GPU
 * memory before, in a step of their own (ctx_maps_to_gpu), so a lookup
 * for maps still on the host is an error, and they stay there.
 */
START_TEST(jit_cache_lookup_allocates_nothing)
{
	egpu_ctx *live = egpu_ctx_new(NULL);
	struct ptx_text text;
	unsigned needs = 0;
	egpu_prog *p;
	egpu_obj *o;

	ck_assert_ptr_nonnull(live);
	o = egpu_load(live, API_OBJ, NULL);
	ck_assert_msg(o, "%s", egpu_errmsg());
	ck_assert_uint_gt(o->spec.map_cnt, 0);
	p = egpu_obj_prog(o, "on_entry");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(jit_cache_probe(live, p, "f", "sm_90", &text, &needs),
			 EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "not in GPU memory"));
	for (size_t i = 0; i < o->spec.map_cnt; i++)
		ck_assert_ptr_null(o->maps[i].dev);
	ck_assert_ptr_null(live->cu_ctx);
	ck_assert_uint_eq(jit_cache_size(live), 0);
	egpu_ctx_free(live);
}
END_TEST

/* One check of targets (core/target.c) for contexts and translation. */
START_TEST(targets_checked)
{
	static const char *const bad[] = { "sm_1000", "sm_99999999999", "sm_31",
					   "sm_90b", "sm_", "sm_90aa" };
	static const char *const good[] = { "sm_100", "sm_120", "sm_100a",
					    "sm_90a", "sm_121f" };
	egpu_prog *p = egpu_obj_prog(obj, "on_entry");
	char *ptx = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EGPU_OPTS(egpu_ctx_opts, co, .offline = true, .sm = bad[i]);

		ck_assert_ptr_null(egpu_ctx_new(&co));
		ck_assert_msg(strstr(egpu_errmsg(), "is not a GPU target"), "%s",
			      egpu_errmsg());
		EGPU_OPTS(egpu_jit_opts, jo, .sm = bad[i]);
		ck_assert_int_eq(egpu_prog_jit_ptx(p, &jo, &ptx, NULL), EGPU_EINVAL);
		ck_assert_ptr_nonnull(strstr(egpu_errmsg(), bad[i]));
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		EGPU_OPTS(egpu_ctx_opts, co, .offline = true, .sm = good[i]);

		egpu_ctx *c = egpu_ctx_new(&co);
		ck_assert_msg(c, "%s: %s", good[i], egpu_errmsg());
		egpu_ctx_free(c);
	}
}
END_TEST

START_TEST(load_errors_name_the_input)
{
	static const char garbage[] = "\x7f" "ELF not really an object";

	ck_assert_ptr_null(egpu_load(ctx, "/nonexistent/probe.o", NULL));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "/nonexistent/probe.o"));
	ck_assert_ptr_null(egpu_load_mem(ctx, garbage, sizeof(garbage), NULL));
	ck_assert_str_ne(egpu_errmsg(), "");
	ck_assert_ptr_null(egpu_load_insns(ctx, garbage, 7, NULL));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "8"));
	ck_assert_ptr_null(egpu_obj_prog(obj, "nope"));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "nope"));
	ck_assert_ptr_null(egpu_obj_map(obj, "nope"));
	ck_assert_int_eq(egpu_strerror(EGPU_ENODEV)[0] != 0, 1);
}
END_TEST

START_TEST(programs_and_maps_listed)
{
	const char *progs[] = { "bump", "on_entry", "on_exit" };
	enum egpu_attach_point at[] = { EGPU_ATTACH_NONE, EGPU_ATTACH_ENTRY,
					EGPU_ATTACH_EXIT };
	const char *kernels[] = { "", "saxpy", "*" };
	egpu_prog *p = NULL;
	int n = 0, maps = 0;

	while ((p = egpu_obj_next_prog(obj, p))) {
		ck_assert_int_lt(n, 3);
		ck_assert_str_eq(egpu_prog_name(p), progs[n]);
		ck_assert_int_eq(egpu_prog_attach_point(p), at[n]);
		ck_assert_str_eq(egpu_prog_kernel(p), kernels[n]);
		ck_assert_uint_gt(egpu_prog_insn_cnt(p), 2);
		n++;
	}
	ck_assert_int_eq(n, 3);
	for (egpu_map *m = NULL; (m = egpu_obj_next_map(obj, m));)
		maps++;
	ck_assert_int_ge(maps, 4); /* counts, slots, .rodata, .data */
	ck_assert_uint_eq(egpu_map_type(egpu_obj_map(obj, "counts")), EGPU_MAP_HASH);
	ck_assert_uint_eq(egpu_map_max_entries(egpu_obj_map(obj, "slots")), 8);
}
END_TEST

START_TEST(hash_map_semantics)
{
	egpu_map *m = egpu_obj_map(obj, "counts");
	uint32_t k, next, seen = 0;
	uint64_t v = 7, out;

	for (k = 0; k < 16; k++)
		ck_assert_int_eq(egpu_map_update(m, &k, &v, EGPU_NOEXIST), 0);
	ck_assert_int_eq(egpu_map_update(m, &k, &v, EGPU_ANY), EGPU_E2BIG);
	ck_assert_str_eq(egpu_errmsg(), "map 'counts': update: full (16 of 16 entries)");
	k = 3;
	ck_assert_int_eq(egpu_map_update(m, &k, &v, EGPU_NOEXIST), EGPU_EEXIST);
	v = 9;
	ck_assert_int_eq(egpu_map_update(m, &k, &v, EGPU_EXIST), 0);
	ck_assert_int_eq(egpu_map_lookup(m, &k, &out), 0);
	ck_assert_uint_eq(out, 9);
	ck_assert_int_eq(egpu_map_delete(m, &k), 0);
	ck_assert_int_eq(egpu_map_delete(m, &k), EGPU_ENOENT);
	ck_assert_int_eq(egpu_map_update(m, &k, &v, EGPU_EXIST), EGPU_ENOENT);
	ck_assert_int_eq(egpu_map_lookup(m, &k, &out), EGPU_ENOENT);
	for (int r = egpu_map_next_key(m, NULL, &next); !r;
	     r = egpu_map_next_key(m, &k, &next)) {
		seen |= 1u << next;
		k = next;
	}
	ck_assert_uint_eq(seen, 0xffffu & ~(1u << 3));
}
END_TEST

START_TEST(array_map_semantics)
{
	egpu_map *m = egpu_obj_map(obj, "slots");
	uint32_t k = 8, n = 0, next;
	uint64_t v = 1;

	ck_assert_int_eq(egpu_map_update(m, &k, &v, EGPU_ANY), EGPU_E2BIG);
	ck_assert_str_eq(egpu_errmsg(),
			 "map 'slots': update: key 8 is past the array's end (max_entries 8)");
	k = 2;
	ck_assert_int_eq(egpu_map_delete(m, &k), EGPU_EINVAL);
	ck_assert_int_eq(egpu_map_update(m, &k, &v, EGPU_NOEXIST), EGPU_EEXIST);
	for (int r = egpu_map_next_key(m, NULL, &next); !r;
	     r = egpu_map_next_key(m, &next, &next))
		n++;
	ck_assert_uint_eq(n, 8);
}
END_TEST

START_TEST(cpu_run_updates_maps)
{
	egpu_prog *p = egpu_obj_prog(obj, "bump");
	uint8_t mem[4] = { 5 };
	uint32_t key = 5;
	uint64_t v;

	for (int i = 1; i <= 3; i++) {
		EGPU_OPTS(egpu_run_opts, ro, .ctx = mem, .ctx_len = sizeof(mem));

		ck_assert_msg(!egpu_prog_run(p, &ro), "run: %s", egpu_errmsg());
		ck_assert_uint_eq(ro.retval, 100 + 3 * i);
	}
	ck_assert_int_eq(egpu_map_lookup(egpu_obj_map(obj, "counts"), &key, &v), 0);
	ck_assert_uint_eq(v, 9);
}
END_TEST

static void assert_ptxas_accepts(const char *ptx, size_t len)
{
	char log[4096];

	ck_assert_msg(tu_ptxas(ptx, len, "sm_90", false, log, sizeof(log)),
		      "ptxas refused it: %s", log);
}

START_TEST(offline_instrumentation_assembles)
{
	EGPU_OPTS(egpu_report, rep);
	size_t len, out_len;
	char *ptx = tu_read_file(API_PTX, &len), *out = NULL;

	ck_assert_int_eq(egpu_attach_all(obj), 2);
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, &rep),
		      "instrument: %s", egpu_errmsg());
	ck_assert_uint_eq(rep.kernel_cnt, 2);
	ck_assert_uint_eq(rep.kernels_patched, 2);
	ck_assert_uint_eq(rep.entry_points, 1);
	ck_assert_uint_ge(rep.exit_points, 2);
	ck_assert_uint_eq(rep.programs, 2);
	ck_assert_uint_eq(strlen(out), out_len);
	/* What the verifier proved reached the JIT: the probes' atomics on
	 * map values go to global memory with no test for the stack. */
	ck_assert_ptr_null(strstr(out, "isspacep.local"));
	ck_assert_ptr_nonnull(strstr(out, "atom.global.add.u64"));
	if (tu_have_ptxas())
		assert_ptxas_accepts(out, out_len);
	free(out);
	free(ptx);
}
END_TEST

/* A pattern matching nothing: a warning by default, an error if strict. */
START_TEST(unknown_kernel_is_a_warning)
{
	size_t len;
	char *ptx = tu_read_file(API_PTX, &len), *out = NULL;
	egpu_prog *p = egpu_obj_prog(obj, "on_entry");
	egpu_link *l = egpu_attach_kernel(p, "no_such_kernel", EGPU_ATTACH_ENTRY, NULL);
	EGPU_OPTS(egpu_attach_opts, strict, .strict = true);
	EGPU_OPTS(egpu_report, rep);

	ck_assert_ptr_nonnull(l);
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, len, &out, NULL, &rep),
		      "instrument: %s", egpu_errmsg());
	ck_assert_uint_eq(rep.kernels_patched, 0);
	ck_assert_uint_eq(rep.warning_cnt, 1);
	ck_assert_ptr_nonnull(strstr(rep.warnings[0], "prog 'on_entry'"));
	ck_assert_ptr_nonnull(strstr(rep.warnings[0], "no_such_kernel"));
	ck_assert_ptr_nonnull(strstr(rep.warnings[0], "kernels: saxpy"));
	free(out);
	out = NULL;
	egpu_link_destroy(l);
	l = egpu_attach_kernel(p, "no_such_kernel", EGPU_ATTACH_ENTRY, &strict);
	ck_assert_int_eq(egpu_instrument_ptx(ctx, ptx, len, &out, NULL, &rep),
			 EGPU_ENOENT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "prog 'on_entry': no kernel matches 'no_such_kernel'"));
	egpu_link_destroy(l);
	free(ptx);
}
END_TEST

/*
 * Without line info (raw instructions) a refusal names the instruction
 * only; the log of egpu_prog_verify() ends with the last steps of the
 * failing path, each with its state.
 */
START_TEST(refusal_without_line_info)
{
	static const uint64_t insns[] = {
		0x00000000000001b7, /* r1 = 0 */
		0x00000000000002b7, /* r2 = 0 */
		0x00000000000003b7, /* r3 = 0 */
		0x00000000000004b7, /* r4 = 0 */
		0x00000000000005b7, /* r5 = 0 */
		0x00000000000006b7, /* r6 = 0 */
		0x00000000000007b7, /* r7 = 0 */
		0x00000000000008b7, /* r8 = 0 */
		0x00000000000009b7, /* r9 = 0 */
		0x0000000000000095, /* exit: r0 never set */
	};
	egpu_obj *raw = egpu_load_insns(ctx, insns, sizeof(insns), NULL);
	EGPU_OPTS(egpu_verify_opts, vo);

	ck_assert_msg(raw, "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_prog_verify(egpu_obj_next_prog(raw, NULL), &vo),
			 EGPU_EVERIFY);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "prog 'prog': insn 9 (exit): "));
	ck_assert_ptr_null(strstr(egpu_errmsg(), " at "));
	ck_assert_msg(strstr(vo.log, "failing path, 10 steps:\n"
					     "... first 1 steps omitted\n1: r2 = 0 ;"), "%s", vo.log);
	ck_assert_ptr_nonnull(strstr(vo.log, "\n8: r9 = 0 ;"));
	free(vo.log);
}
END_TEST

/* A refused probe does not sink its object; it cannot be used. */
/* An unknown helper refuses its program alone, at every use. */
START_TEST(unknown_helper_refuses_its_program)
{
	EGPU_OPTS(egpu_load_opts, strict, .strict = true);
	EGPU_OPTS(egpu_verify_opts, vo, .at_set = true, .at = EGPU_ATTACH_EXIT);
	EGPU_OPTS(egpu_run_opts, ro);
	egpu_obj *uo = egpu_load(ctx, UNKNOWN_HELPER_OBJ, NULL);
	egpu_prog *bad, *run;
	const char *why;
	char *ptx = NULL;

	ck_assert_msg(uo, "load: %s", egpu_errmsg());
	ck_assert_int_eq(egpu_prog_verdict(egpu_obj_prog(uo, "good_entry"), &why), 0);
	bad = egpu_obj_prog(uo, "calls_unknown");
	run = egpu_obj_prog(uo, "run_unknown");
	ck_assert_int_eq(egpu_prog_verdict(bad, &why), EGPU_EVERIFY);
	ck_assert_ptr_nonnull(strstr(why, "unknown helper 9999"));
	ck_assert_int_eq(egpu_prog_verdict(run, &why), EGPU_EVERIFY);
	ck_assert_int_eq(egpu_attach_all(uo), 1);
	/* elsewhere too: another attach point, translation, a direct run */
	ck_assert_int_eq(egpu_prog_verify(bad, &vo), EGPU_EVERIFY);
	ck_assert_ptr_nonnull(strstr(vo.log, "prog 'calls_unknown': refused: insn 0 (call 9999)"));
	free(vo.log);
	ck_assert_ptr_null(egpu_attach_kernel(bad, "saxpy", EGPU_ATTACH_EXIT, NULL));
	ck_assert_int_eq(egpu_prog_jit_ptx(bad, NULL, &ptx, NULL), EGPU_EVERIFY);
	ck_assert_ptr_null(ptx);
	ck_assert_int_eq(egpu_prog_run(run, &ro), EGPU_EVERIFY);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "unknown helper 9999"));
	/* a strict load fails on it */
	ck_assert_ptr_null(egpu_load(ctx, UNKNOWN_HELPER_OBJ, &strict));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "unknown helper 9999"));
}
END_TEST

START_TEST(refused_program_keeps_object)
{
	EGPU_OPTS(egpu_load_opts, strict, .strict = true);
	egpu_obj *mo = egpu_load(ctx, MIXED_OBJ, NULL);
	egpu_prog *good, *bad;
	const char *why = NULL;
	char *ptx = NULL;
	size_t len;

	ck_assert_msg(mo, "load: %s", egpu_errmsg());
	good = egpu_obj_prog(mo, "good_entry");
	bad = egpu_obj_prog(mo, "bad_exit");
	ck_assert_int_eq(egpu_prog_verdict(good, &why), 0);
	ck_assert_str_eq(why, "");
	ck_assert_int_eq(egpu_prog_verdict(bad, &why), EGPU_EVERIFY);
	ck_assert_ptr_nonnull(strstr(why, "prog 'bad_exit'"));
	ck_assert_ptr_nonnull(strstr(why, "out-of-bounds"));
	/* clang -g: the C source line, file:line and text */
	ck_assert_ptr_nonnull(strstr(why, "(r0 = *(u64 *)(r1 + 40)) at mixed.bpf.c:28: "
				     "`return *(volatile __u64 *)((char *)ctx + 40);`: "));
	/* verify reports it again, with the log */
	EGPU_OPTS(egpu_verify_opts, vo);
	ck_assert_int_eq(egpu_prog_verify(bad, &vo), EGPU_EVERIFY);
	ck_assert_ptr_nonnull(strstr(vo.log, "prog 'bad_exit': refused"));
	ck_assert_ptr_nonnull(strstr(vo.log, "failing path, 1 steps:\n"));
	free(vo.log);
	/* attaching, translating, running it: errors naming it */
	ck_assert_ptr_null(egpu_attach_kernel(bad, "saxpy", EGPU_ATTACH_EXIT, NULL));
	ck_assert_int_eq(egpu_errcode(), EGPU_EVERIFY);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "cannot attach to 'saxpy'"));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "bad_exit"));
	ck_assert_int_eq(egpu_prog_jit_ptx(bad, NULL, &ptx, &len), EGPU_EVERIFY);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "bad_exit"));
	/* attach_all takes the good one only */
	ck_assert_int_eq(egpu_attach_all(mo), 1);
	ck_assert_int_eq(egpu_prog_jit_ptx(good, NULL, &ptx, &len), 0);
	free(ptx);
	/* the old behaviour on request */
	ck_assert_ptr_null(egpu_load(ctx, MIXED_OBJ, &strict));
	ck_assert_int_eq(egpu_errcode(), EGPU_EVERIFY);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "bad_exit"));
}
END_TEST

/* Memory probes without a GPU: masks, the site table, ptxas. */
START_TEST(mem_probes_offline)
{
	egpu_obj *mo = egpu_load(ctx, MEM_OBJ, NULL);
	egpu_prog *p = egpu_obj_prog(mo, "mem_probe");
	EGPU_OPTS(egpu_attach_opts, ao,
		  .mem_spaces = 1u << EGPU_SPACE_GLOBAL | 1u << EGPU_SPACE_SHARED);
	EGPU_OPTS(egpu_attach_opts, bad, .mem_kinds = 1u << 9);
	EGPU_OPTS(egpu_report, rep);
	size_t len, out_len;
	char *ptx = tu_read_file(MEM_PTX, &len), *out = NULL;

	ck_assert_msg(p, "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_prog_attach_point(p), EGPU_ATTACH_MEM);
	ck_assert_ptr_null(egpu_attach_kernel(p, "vadd_mem", EGPU_ATTACH_MEM, &bad));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "mem_kinds 0x200"));
	ck_assert_ptr_null(egpu_attach_kernel(egpu_obj_prog(obj, "on_entry"), "k",
					      EGPU_ATTACH_ENTRY, &ao));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "memory probes only"));
	ck_assert_ptr_nonnull(egpu_attach_kernel(p, "vadd_mem", EGPU_ATTACH_MEM, &ao));
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, &rep),
		      "instrument: %s", egpu_errmsg());
	/* a[i], b[i], tile store and load, out[i], the guarded flag store */
	ck_assert_uint_eq(rep.mem_site_cnt, 6);
	ck_assert_uint_eq(rep.kernels[0].mem_points, 6);
	ck_assert_uint_eq(rep.kernels_patched, 1);
	for (uint32_t i = 0; i < rep.mem_site_cnt; i++) {
		const struct egpu_mem_site *s = &rep.mem_sites[i];

		ck_assert_uint_eq(s->site, i);
		ck_assert_uint_eq(s->kernel_id, 0);
		ck_assert_str_eq(s->function, "vadd_mem");
		ck_assert_uint_eq(s->size, 4);
		ck_assert(s->space == EGPU_SPACE_GLOBAL || s->space == EGPU_SPACE_SHARED);
		ck_assert_ptr_nonnull(strstr(ptx, s->text));
	}
	ck_assert_ptr_nonnull(strstr(rep.mem_sites[5].text, "@p st.global.u32"));
	if (tu_have_ptxas())
		assert_ptxas_accepts(out, out_len);
	free(out);
	free(ptx);
}
END_TEST

static void keep_last(enum egpu_log_level level, const char *msg, void *user)
{
	if (level == EGPU_LOG_WARN)
		snprintf(user, 256, "%s", msg);
}

/* Masks that select nothing probe nothing, and the log says so. */
START_TEST(mem_probes_selecting_nothing)
{
	char warned[256] = "";
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true, .log = keep_last,
		  .log_user = warned, .log_level = EGPU_LOG_WARN);
	egpu_ctx *c = egpu_ctx_new(&co);
	egpu_obj *mo = egpu_load(c, MEM_OBJ, NULL);
	EGPU_OPTS(egpu_attach_opts, ao, .mem_kinds = 1u << EGPU_MEM_ASYNC);
	EGPU_OPTS(egpu_report, rep);
	size_t len;
	char *ptx = tu_read_file(MEM_PTX, &len), *out = NULL;

	ck_assert_ptr_nonnull(egpu_attach_kernel(egpu_obj_prog(mo, "mem_probe"),
						 "*", EGPU_ATTACH_MEM, &ao));
	ck_assert_msg(!egpu_instrument_ptx(c, ptx, len, &out, NULL, &rep),
		      "instrument: %s", egpu_errmsg());
	ck_assert_uint_eq(rep.mem_site_cnt, 0);
	ck_assert_uint_eq(rep.kernels_patched, 1);
	ck_assert_ptr_nonnull(strstr(warned, "no memory instruction"));
	free(out);
	free(ptx);
	egpu_ctx_free(c);
}
END_TEST

/* What a direct GPU run loads: the program, its kernel, the runtime. */
START_TEST(direct_run_module_assembles)
{
	char *ptx = NULL;

	ck_assert_msg(!prog_kernel_ptx(egpu_obj_prog(obj, "bump"), "run_bump",
				       "sm_90", &ptx), "%s", egpu_errmsg());
	ck_assert_ptr_nonnull(strstr(ptx, ".entry run_bump_kernel"));
	ck_assert_ptr_nonnull(strstr(ptx, "egpu_dev_map_lookup_elem"));
	if (tu_have_ptxas())
		assert_ptxas_accepts(ptx, strlen(ptx));
	free(ptx);
}
END_TEST

START_TEST(gpu_calls_refused_offline)
{
	EGPU_OPTS(egpu_run_opts, ro, .backend = EGPU_BACKEND_GPU);
	CUmodule mod;

	ck_assert_int_eq(egpu_module_load(ctx, &mod, "x", 1), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "offline"));
	ck_assert_int_ne(egpu_prog_run(egpu_obj_prog(obj, "bump"), &ro), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("api");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ctx_opts_checked);
	tcase_add_test(tc, opts_padding_checked);
	tcase_add_test(tc, jit_cache_lookup_allocates_nothing);
	tcase_add_test(tc, targets_checked);
	tcase_add_test(tc, load_errors_name_the_input);
	tcase_add_test(tc, programs_and_maps_listed);
	tcase_add_test(tc, hash_map_semantics);
	tcase_add_test(tc, array_map_semantics);
	tcase_add_test(tc, cpu_run_updates_maps);
	tcase_add_test(tc, offline_instrumentation_assembles);
	tcase_add_test(tc, unknown_kernel_is_a_warning);
	tcase_add_test(tc, refused_program_keeps_object);
	tcase_add_test(tc, unknown_helper_refuses_its_program);
	tcase_add_test(tc, refusal_without_line_info);
	tcase_add_test(tc, mem_probes_offline);
	tcase_add_test(tc, mem_probes_selecting_nothing);
	tcase_add_test(tc, direct_run_module_assembles);
	tcase_add_test(tc, gpu_calls_refused_offline);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
