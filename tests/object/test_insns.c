/* SPDX-License-Identifier: MIT */
/* verifier_check_insns() and object_parse_raw() on hand-made programs. */
#include "object_test.h"

#define INSN(c, d, s, o, i)                                                  \
	{ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define EXIT INSN(0x95, 0, 0, 0, 0)
#define MOV0 INSN(0xb7, 0, 0, 0, 0)
#define LDDW(dst, src, lo, hi) INSN(0x18, dst, src, 0, lo), INSN(0, 0, 0, 0, hi)
#define PROG(...)                                                            \
	.insns = { __VA_ARGS__ },                                            \
	.n = sizeof((struct bpf_insn[]){ __VA_ARGS__ }) / sizeof(struct bpf_insn)

struct insn_case {
	const char *what;
	struct bpf_insn insns[12];
	size_t n;
	size_t map_cnt;
	int abi;
	int err;          /* 0: must pass */
	const char *text; /* in the message */
};

static const struct insn_case cases[] = {
	/* ---- valid programs ---- */
	{ "mov exit", PROG(MOV0, EXIT) },
	{ "lddw imm64", PROG(LDDW(0, 0, 1, 2), EXIT) },
	{ "lddw map", PROG(LDDW(1, 5, 1, 0), MOV0, EXIT), .map_cnt = 2 },
	{ "lddw map value", PROG(LDDW(1, 6, 1, 16), MOV0, EXIT), .map_cnt = 2 },
	{ "jump over lddw", PROG(INSN(0x15, 1, 0, 2, 0), LDDW(0, 0, 1, 0), EXIT) },
	{ "local call", PROG(INSN(0x85, 0, 1, 0, 2), MOV0, EXIT,
			     INSN(0xb7, 0, 0, 0, 1), EXIT) },
	{ "gotol", PROG(INSN(0x06, 0, 0, 0, 1), MOV0, MOV0, EXIT) },
	{ "isa v4 forms", PROG(INSN(0x37, 0, 0, 1, 3),   /* sdiv64 imm */
			       INSN(0x9c, 0, 1, 1, 0),   /* smod32 reg */
			       INSN(0xbf, 0, 1, 32, 0),  /* movsx64 s32 */
			       INSN(0xbc, 0, 1, 16, 0),  /* movsx32 s16 */
			       INSN(0x81, 0, 1, 2, 0),   /* ldxsw */
			       INSN(0xd7, 0, 0, 0, 64),  /* bswap64 */
			       INSN(0xdc, 0, 0, 0, 16),  /* be16 */
			       INSN(0xdb, 1, 2, 0, 0x01), /* fetch_add64 */
			       INSN(0xc3, 1, 2, 0, 0xf1), /* cmpxchg32 */
			       INSN(0x16, 0, 0, 0, 5),   /* jeq32 */
			       EXIT) },
	{ "callx", PROG(INSN(0x8d, 2, 0, 0, 0), EXIT) },
	{ "frame pointer uses", PROG(INSN(0x7a, 10, 0, -8, 1),
				     INSN(0x7b, 10, 1, -16, 0),
				     INSN(0xbf, 1, 10, 0, 0),
				     INSN(0x0f, 2, 10, 0, 0),
				     INSN(0x5d, 1, 10, 1, 0), MOV0, EXIT) },
	{ "shift count masked", PROG(INSN(0x67, 0, 0, 0, 70), EXIT) },
	{ "conformance helper 5", PROG(INSN(0x85, 0, 0, 0, 5), EXIT),
	  .abi = EGPU_HELPERS_CONFORMANCE },

	/* ---- encoding ---- */
	{ "invalid opcode", PROG(INSN(0xff, 0, 0, 0, 0), EXIT), 0, 0,
	  EGPU_EFORMAT, "insn 0 (opcode 0xff): invalid opcode 0xff" },
	{ "alu reserved offset", PROG(INSN(0x0f, 0, 1, 2, 0), EXIT), 0, 0,
	  EGPU_EFORMAT, "reserved field offset is 2, must be 0" },
	{ "alu reg with imm", PROG(INSN(0x0f, 0, 1, 0, 7), EXIT), 0, 0,
	  EGPU_EFORMAT, "(add64 r0, r1): reserved field imm is 7" },
	{ "neg reg form", PROG(INSN(0x8f, 0, 0, 0, 0), EXIT), 0, 0,
	  EGPU_EFORMAT, "invalid opcode 0x8f" },
	{ "bswap reg form", PROG(INSN(0xdf, 0, 0, 0, 16), EXIT), 0, 0,
	  EGPU_EFORMAT, "invalid opcode 0xdf" },
	{ "byte swap width", PROG(INSN(0xd4, 0, 0, 0, 8), EXIT), 0, 0,
	  EGPU_EFORMAT, "(le8 r0): byte swap width 8 is not 16, 32 or 64" },
	{ "div offset", PROG(INSN(0x3f, 0, 1, 2, 0), EXIT), 0, 0,
	  EGPU_EFORMAT, "offset 2: must be 0 (unsigned) or 1 (signed)" },
	{ "movsx32 from 32", PROG(INSN(0xbc, 0, 1, 32, 0), EXIT), 0, 0,
	  EGPU_EFORMAT, "sign extension from 32 bits: must be 8, 16" },
	{ "mov imm offset", PROG(INSN(0xb7, 0, 0, 8, 1), EXIT), 0, 0,
	  EGPU_EFORMAT, "reserved field offset is 8" },
	{ "ldxsdw", PROG(INSN(0x99, 0, 1, 0, 0), EXIT), 0, 0,
	  EGPU_EFORMAT, "invalid opcode 0x99" },
	{ "atomic half word", PROG(INSN(0xcb, 1, 2, 0, 0), EXIT), 0, 0,
	  EGPU_EFORMAT, "invalid opcode 0xcb" },
	{ "atomic operation", PROG(INSN(0xdb, 1, 2, 0, 0x10), EXIT), 0, 0,
	  EGPU_EFORMAT, "invalid atomic operation 0x10" },
	{ "jmp32 call", PROG(INSN(0x86, 0, 0, 0, 5), EXIT), 0, 0,
	  EGPU_EFORMAT, "invalid opcode 0x86" },
	{ "jmp32 exit", PROG(INSN(0x96, 0, 0, 0, 0), EXIT), 0, 0,
	  EGPU_EFORMAT, "invalid opcode 0x96" },
	{ "ja reg form", PROG(INSN(0x0d, 0, 0, 0, 0), EXIT), 0, 0,
	  EGPU_EFORMAT, "invalid opcode 0x0d" },
	{ "gotol with offset", PROG(INSN(0x06, 0, 0, 1, 0), MOV0, EXIT), 0, 0,
	  EGPU_EFORMAT, "(gotol +0): reserved field offset is 1" },
	{ "register 11", PROG(INSN(0xb7, 11, 0, 0, 0), EXIT), 0, 0,
	  EGPU_EFORMAT, "no register r11" },
	{ "source register 12", PROG(INSN(0xbf, 0, 12, 0, 0), EXIT), 0, 0,
	  EGPU_EFORMAT, "no register r12" },
	{ "legacy packet load", PROG(INSN(0x20, 0, 0, 0, 0), EXIT), 0, 0,
	  EGPU_ENOTSUP, "legacy packet loads (BPF_ABS/BPF_IND) are not supported" },

	/* ---- the frame pointer ---- */
	{ "mov to r10", PROG(INSN(0xb7, 10, 0, 0, 0), EXIT), 0, 0,
	  EGPU_EVERIFY, "writes r10, the read-only frame pointer" },
	/* refused even where no path goes: the JIT keeps r10 fixed */
	{ "r10 written in dead code",
	  PROG(INSN(0x05, 0, 0, 1, 0), INSN(0x07, 10, 0, 0, 10), MOV0, EXIT), 0, 0,
	  EGPU_EVERIFY, "writes r10, the read-only frame pointer" },
	{ "load into r10", PROG(INSN(0x79, 10, 1, 0, 0), EXIT), 0, 0,
	  EGPU_EVERIFY, "(ldxdw r10, [r1+0]): writes r10" },
	{ "or with r10", PROG(INSN(0x4f, 0, 10, 0, 0), EXIT), 0, 0,
	  EGPU_EVERIFY, "the frame pointer r10 cannot be an operand here" },
	{ "mov32 from r10", PROG(INSN(0xbc, 0, 10, 0, 0), EXIT), 0, 0,
	  EGPU_EVERIFY, "the frame pointer r10 cannot be an operand here" },
	{ "atomic with r10", PROG(INSN(0xdb, 1, 10, 0, 1), EXIT), 0, 0,
	  EGPU_EVERIFY, "the frame pointer r10 cannot be an operand here" },
	{ "movsx from r10", PROG(INSN(0xbf, 0, 10, 8, 0), EXIT), 0, 0,
	  EGPU_EVERIFY, "sign-extending the frame pointer r10" },
	{ "callx r10", PROG(INSN(0x8d, 10, 0, 0, 0), EXIT), 0, 0,
	  EGPU_EVERIFY, "callx through the frame pointer r10" },

	/* ---- lddw ---- */
	{ "lddw truncated", PROG(MOV0, INSN(0x18, 0, 0, 0, 1)), 0, 0,
	  EGPU_EFORMAT, "insn 1 (lddw r0, 0x1): lddw is truncated" },
	{ "lddw second slot register", PROG(INSN(0x18, 0, 0, 0, 1),
					    INSN(0, 1, 0, 0, 0), EXIT), 0, 0,
	  EGPU_EFORMAT, "second slot of lddw must have zero opcode" },
	{ "lddw second slot opcode", PROG(INSN(0x18, 0, 0, 0, 1), EXIT, EXIT),
	  0, 0, EGPU_EFORMAT, "second slot of lddw must have zero opcode" },
	{ "lddw offset", PROG(INSN(0x18, 0, 0, 3, 1), INSN(0, 0, 0, 0, 0),
			      EXIT), 0, 0,
	  EGPU_EFORMAT, "reserved field offset is 3" },
	{ "lddw map index", PROG(LDDW(1, 5, 2, 0), EXIT), 2, 0,
	  EGPU_EVERIFY, "(lddw r1, map[2]): map index 2 out of range (2 maps)" },
	{ "lddw negative map index", PROG(LDDW(1, 6, -1, 0), EXIT), 2, 0,
	  EGPU_EVERIFY, "map index -1 out of range" },
	{ "lddw map upper imm", PROG(LDDW(1, 5, 0, 4), EXIT), 1, 0,
	  EGPU_EFORMAT, "map reference with non-zero upper imm 4" },
	{ "lddw map fd", PROG(LDDW(1, 1, 3, 0), EXIT), 1, 0,
	  EGPU_EFORMAT, "map file descriptor form (src 1) must be resolved by the loader" },
	{ "lddw btf id", PROG(LDDW(1, 3, 3, 0), EXIT), 0, 0,
	  EGPU_ENOTSUP, "kernel symbol (BTF id) references are not supported" },
	{ "lddw function", PROG(LDDW(1, 4, 3, 0), EXIT), 0, 0,
	  EGPU_ENOTSUP, "function addresses (callbacks) are not supported" },
	{ "lddw source 7", PROG(LDDW(1, 7, 0, 0), EXIT), 0, 0,
	  EGPU_EFORMAT, "invalid lddw source form 7" },
	{ "lddw into r10", PROG(LDDW(10, 0, 0, 0), EXIT), 0, 0,
	  EGPU_EVERIFY, "writes r10" },

	/* ---- control flow ---- */
	{ "jump into lddw", PROG(INSN(0x05, 0, 0, 1, 0), LDDW(0, 0, 1, 0), EXIT),
	  0, 0, EGPU_EVERIFY,
	  "prog 't': insn 0 (ja +1): jump to insn 2, the second slot of the lddw at insn 1" },
	{ "jump back into lddw", PROG(LDDW(0, 0, 1, 0), INSN(0x05, 0, 0, -2, 0),
				      EXIT), 0, 0,
	  EGPU_EVERIFY, "insn 2 (ja -2): jump to insn 1, the second slot" },
	{ "jump out", PROG(INSN(0x05, 0, 0, 5, 0), EXIT), 0, 0,
	  EGPU_EVERIFY, "jump to insn 6 outside the program (2 insns)" },
	{ "jump before start", PROG(INSN(0x15, 1, 0, -3, 0), EXIT), 0, 0,
	  EGPU_EVERIFY, "(jeq r1, 0, -3): jump to insn -2 outside the program" },
	{ "gotol out", PROG(INSN(0x06, 0, 0, 0, 100), EXIT), 0, 0,
	  EGPU_EVERIFY, "jump to insn 101 outside the program" },
	{ "unknown helper", PROG(INSN(0x85, 0, 0, 0, 9999), EXIT), 0, 0,
	  EGPU_EVERIFY, "(call 9999): unknown helper 9999 (GPU helpers)" },
	{ "conformance helpers", PROG(INSN(0x85, 0, 0, 0, 1), EXIT), 0,
	  EGPU_HELPERS_CONFORMANCE,
	  EGPU_EVERIFY, "unknown helper 1 (conformance helpers)" },
	{ "kfunc call", PROG(INSN(0x85, 0, 2, 0, 7), EXIT), 0, 0,
	  EGPU_ENOTSUP, "kernel function (kfunc) calls are not supported" },
	{ "call source 3", PROG(INSN(0x85, 0, 3, 0, 1), EXIT), 0, 0,
	  EGPU_EFORMAT, "invalid call source form 3" },
	{ "call out", PROG(INSN(0x85, 0, 1, 0, 10), EXIT), 0, 0,
	  EGPU_EVERIFY, "(call pc+10): call to insn 11 outside the program" },
	{ "call into lddw", PROG(INSN(0x85, 0, 1, 0, 2), EXIT, LDDW(0, 0, 1, 0),
				 EXIT), 0, 0,
	  EGPU_EVERIFY, "call to insn 3, the second slot of the lddw at insn 2" },
	{ "fall off", PROG(MOV0), 0, 0,
	  EGPU_EVERIFY, "insn 0 (mov64 r0, 0): execution can fall off the end" },
	{ "fall off after lddw", PROG(LDDW(0, 0, 1, 0)), 0, 0,
	  EGPU_EVERIFY, "insn 1 (opcode 0x00): execution can fall off the end" },
	{ "fall into subprogram", PROG(INSN(0x85, 0, 1, 0, 2), MOV0, MOV0, EXIT),
	  0, 0, EGPU_EVERIFY,
	  "insn 2 (mov64 r0, 0): execution can fall into the subprogram at insn 3" },
	{ "jump out of subprogram", PROG(INSN(0x85, 0, 1, 0, 1), EXIT,
					 INSN(0x05, 0, 0, -2, 0), EXIT), 0, 0,
	  EGPU_EVERIFY, "insn 2 (ja -2): jump to insn 1 leaves its subprogram" },
	{ "jump into subprogram", PROG(INSN(0x15, 1, 0, 2, 0),
				       INSN(0x85, 0, 1, 0, 1), EXIT, MOV0, EXIT),
	  0, 0, EGPU_EVERIFY, "jump to insn 3 leaves its subprogram" },
};

START_TEST(insn_case)
{
	const struct insn_case *c = &cases[_i];
	struct prog_spec p = {
		.name = "t",
		.insns = (struct bpf_insn *)c->insns,
		.insn_cnt = c->n,
	};
	int err;

	err_clear();
	err = verifier_check_insns(&p, c->map_cnt, c->abi);
	if (!c->err) {
		ck_assert_msg(!err, "%s: refused: %s", c->what, egpu_errmsg());
		return;
	}
	ck_assert_msg(err == c->err, "%s: %d, not %d (%s)", c->what, err,
		      c->err, egpu_errmsg());
	ck_assert_msg(strstr(egpu_errmsg(), c->text), "%s: '%s' lacks '%s'",
		      c->what, egpu_errmsg(), c->text);
}
END_TEST

START_TEST(message_format)
{
	struct bpf_insn insns[] = { INSN(0x07, 0, 1, 0, 1), EXIT };
	struct prog_spec p = { .name = "probe", .insns = insns, .insn_cnt = 2 };

	ck_assert_int_eq(verifier_check_insns(&p, 0, 0), EGPU_EFORMAT);
	ck_assert_str_eq(egpu_errmsg(),
			 "prog 'probe': insn 0 (add64 r0, 1): reserved field src_reg is 1, must be 0");
}
END_TEST

START_TEST(no_instructions)
{
	struct prog_spec p = { .name = "none" };

	ck_assert_fails(verifier_check_insns(&p, 0, 0), EGPU_EFORMAT,
			"prog 'none': has no instructions");
}
END_TEST

START_TEST(raw_program)
{
	struct bpf_insn insns[] = { INSN(0xb7, 0, 0, 0, 7), EXIT };
	struct object_spec s;

	ck_assert_ok(object_parse_raw(insns, sizeof(insns), &s));
	ck_assert_uint_eq(s.prog_cnt, 1);
	ck_assert_uint_eq(s.map_cnt, 0);
	ck_assert_str_eq(s.progs[0].name, "prog");
	ck_assert_str_eq(s.progs[0].section, "");
	ck_assert_str_eq(s.progs[0].kernel, "");
	ck_assert_int_eq(s.progs[0].attach, EGPU_ATTACH_NONE);
	ck_assert_uint_eq(s.progs[0].insn_cnt, 2);
	ck_assert_mem_eq(s.progs[0].insns, insns, sizeof(insns));
	object_spec_free(&s);
	object_spec_free(NULL);
}
END_TEST

START_TEST(raw_errors)
{
	struct bpf_insn insns[] = { INSN(0x85, 0, 0, 0, 9999), EXIT };
	struct object_spec s = { .prog_cnt = 42 };

	ck_assert_fails(object_parse_raw(insns, 13, &s), EGPU_EFORMAT,
			"raw program: length 13 is not a multiple of 8");
	ck_assert_fails(object_parse_raw(insns, 0, &s), EGPU_EFORMAT,
			"raw program is empty");
	ck_assert_uint_eq(s.prog_cnt, 42); /* untouched on failure */
	/* The loader only loads; the verifier refuses the helper. */
	ck_assert_ok(object_parse_raw(insns, sizeof(insns), &s));
	ck_assert_fails(verifier_check_object(&s, 0), EGPU_EVERIFY,
			"prog 'prog': insn 0 (call 9999): unknown helper");
	object_spec_free(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("object_insns");
	TCase *tc = tcase_create("insns");

	tcase_add_loop_test(tc, insn_case, 0, ARRAY_SIZE(cases));
	tcase_add_test(tc, message_format);
	tcase_add_test(tc, no_instructions);
	tcase_add_test(tc, raw_program);
	tcase_add_test(tc, raw_errors);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
