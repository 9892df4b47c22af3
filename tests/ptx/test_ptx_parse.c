/* SPDX-License-Identifier: MIT */
/* Tokenizer and parser on hand-written PTX: the model and the errors. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/module.h"
#include "ptx_util.h"
#include "test_util.h"

static struct ptx_module *parse_ok(const char *text)
{
	struct ptx_module *m = NULL;
	int err = ptx_parse("test", text, strlen(text), &m);

	ck_assert_msg(!err, "parse failed: %s", egpu_errmsg());
	ck_assert_ptr_null(check_coverage(m));
	return m;
}

/* Parse of @len bytes must fail with EGPU_EFORMAT and a message with @want. */
static void parse_fails_n(const char *text, size_t len, const char *want)
{
	struct ptx_module *m = NULL;
	int err = ptx_parse("test", text, len, &m);

	ck_assert_int_eq(err, EGPU_EFORMAT);
	ck_assert_ptr_null(m);
	ck_assert_msg(strstr(egpu_errmsg(), want), "message '%s' lacks '%s'",
		      egpu_errmsg(), want);
}

static void parse_fails(const char *text, const char *want)
{
	parse_fails_n(text, strlen(text), want);
}

static void tok_check(const struct ptx_module *m, uint32_t i, int kind,
		      const char *text, uint32_t line, uint32_t col)
{
	const struct tok *t = &m->toks[i];

	ck_assert_msg(t->kind == kind && t->len == strlen(text) &&
			      !memcmp(m->text + t->off, text, t->len) &&
			      t->line == line && t->col == col,
		      "token %u: kind %d '%.*s' at %u:%u, want %d '%s' at %u:%u",
		      i, t->kind, (int)t->len, m->text + t->off, t->line, t->col,
		      kind, text, line, col);
}

START_TEST(tokens)
{
	static const char text[] =
		"ld.global.v2.f32 {%f1,%f2}, [%rd1+-8]; // c\n"
		"/* a\n b */ 0f3F800000 1.5e-3 0x1FU \"s\\\"q\" $L__BB0_1: @!%p1 _\n";
	struct tok *toks;
	uint32_t n;
	struct ptx_module m = { .text = text, .len = strlen(text) };

	ck_assert_int_eq(ptx_lex(text, strlen(text), &toks, &n), 0);
	m.toks = toks;
	m.ntoks = n;
	tok_check(&m, 0, TOK_IDENT, "ld", 1, 1);
	tok_check(&m, 1, TOK_DIR, ".global", 1, 3);
	tok_check(&m, 3, TOK_DIR, ".f32", 1, 13);
	tok_check(&m, 4, TOK_PUNCT, "{", 1, 18);
	tok_check(&m, 5, TOK_IDENT, "%f1", 1, 19);
	tok_check(&m, 10, TOK_PUNCT, "[", 1, 29);
	tok_check(&m, 11, TOK_IDENT, "%rd1", 1, 30);
	tok_check(&m, 12, TOK_PUNCT, "+", 1, 34);
	tok_check(&m, 13, TOK_PUNCT, "-", 1, 35);
	tok_check(&m, 14, TOK_INT, "8", 1, 36);
	tok_check(&m, 17, TOK_FLOAT, "0f3F800000", 3, 7);
	ck_assert(m.toks[17].bol);
	ck_assert(!m.toks[18].bol);
	tok_check(&m, 18, TOK_FLOAT, "1.5e-3", 3, 18);
	tok_check(&m, 19, TOK_INT, "0x1FU", 3, 25);
	tok_check(&m, 20, TOK_STRING, "\"s\\\"q\"", 3, 31);
	tok_check(&m, 21, TOK_IDENT, "$L__BB0_1", 3, 38);
	tok_check(&m, 22, TOK_PUNCT, ":", 3, 47);
	tok_check(&m, 23, TOK_PUNCT, "@", 3, 49);
	tok_check(&m, 24, TOK_PUNCT, "!", 3, 50);
	tok_check(&m, 25, TOK_IDENT, "%p1", 3, 51);
	tok_check(&m, 26, TOK_IDENT, "_", 3, 55);
	ck_assert_int_eq(m.toks[27].kind, TOK_EOF);
	ck_assert_uint_eq(n, 28);
	free(toks);
}
END_TEST

static void lex_fails_n(const char *text, size_t len, const char *want)
{
	struct tok *toks = NULL;
	uint32_t n;

	ck_assert_int_eq(ptx_lex(text, len, &toks, &n), EGPU_EFORMAT);
	ck_assert_ptr_null(toks);
	ck_assert_msg(!strcmp(egpu_errmsg(), want), "'%s', want '%s'",
		      egpu_errmsg(), want);
}

static void lex_fails(const char *text, const char *want)
{
	lex_fails_n(text, strlen(text), want);
}

START_TEST(token_errors)
{
	lex_fails("ret;\n  \"abc\n", "PTX line 2 col 3: unterminated string");
	lex_fails("ret; /* open\n\n", "PTX line 1 col 6: unterminated /* comment");
	lex_fails("\n\t#include <x>", "PTX line 2 col 2: unexpected character '#'");
	lex_fails("mov.u32 %r1, 0x;", "PTX line 1 col 14: malformed number");
	lex_fails("mov.u32 %r1, 12ab;", "PTX line 1 col 14: malformed number");
	lex_fails("a \x80", "PTX line 1 col 3: unexpected byte 0x80");
	lex_fails_n("a\0b", 3, "PTX line 1 col 2: unexpected byte 0x00");
}
END_TEST

static const char module_text[] =
	"//\n// header comment\n//\n"
	".version 8.4\n"
	".target sm_90a, texmode_independent\n"
	".address_size 64\n"
	"\n"
	".extern .func (.param .b32 func_retval0) vprintf\n"
	"(\n\t.param .b64 vprintf_param_0,\n\t.param .b64 vprintf_param_1\n);\n"
	".global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};\n"
	".visible .const .align 8 .u64 ptrs[2] = {generic(table), generic(table)+4};\n"
	".extern .shared .align 16 .b8 dyn[];\n"
	".weak .func helper(.param .b32 x) .noreturn;\n"
	".func (.param .b32 r) twice(.param .b32 x)\n"
	"{\n\t.reg .b32 %r<3>;\n\tld.param.u32 %r1, [x];\n"
	"\tadd.u32 %r2, %r1, %r1;\n\tst.param.b32 [r], %r2;\n\tret;\n}\n"
	".alias twice_alias, twice;\n"
	".pragma \"nounroll\";\n"
	".visible .entry k(\n"
	"\t.param .u8 k_c,\n"
	"\t.param .u64 .ptr .global .align 16 k_p,\n"
	"\t.param .align 8 .b8 k_s[20],\n"
	"\t.param .f32 k_f,\n"
	"\t.param .v2 .u32 k_v\n"
	")\n"
	".maxntid 256, 1, 1\n.minnctapersm 2\n.maxnreg 40\n.pragma \"abi\";\n"
	"{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.local .align 4 .b8 buf[16];\n"
	"\t.loc 1 5 3, function_name $L__info_string0, inlined_at 1 10 5\n"
	"$L__func_begin0:\n"
	"\tsetp.eq.u32 %p1, 1, 1;\n"
	"\t@!%p1 bra $L__BB0_2;\n"
	"\t{ // callseq 0, 0\n"
	"\t.param .b32 param0;\n"
	"\tst.param.b32 [param0+0], 1;\n"
	"\t.param .b32 retval0;\n"
	"\tcall.uni (retval0), \n\ttwice, \n\t(\n\tparam0\n\t);\n"
	"\t}\n"
	"prototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);\n"
	"\tmov.b64 %rd1, {%r1, %r2};\n"
	"$L__BB0_2:\n"
	"\t@%p1 exit;\n"
	"\tret.uni;\n"
	"}\n"
	".file 1 \"/tmp/a.cu\", 1700000000, 1234\n"
	".section .debug_info\n{\n$L__info0:\n.b32 12\n{ .b8 1, 2 }\n.b64 $L__func_begin0\n}\n";

static const struct ptx_item *item_named(const struct ptx_module *m,
					 const char *name)
{
	uint32_t i;

	for (i = 0; i < m->nitems; i++)
		if ((m->items[i].kind == IT_FUNC || m->items[i].kind == IT_VAR ||
		     m->items[i].kind == IT_ALIAS) &&
		    tok_is(m, m->items[i].name, name))
			return &m->items[i];
	ck_abort_msg("no item %s", name);
	return NULL;
}

START_TEST(module_items)
{
	static const uint8_t kinds[] = {
		IT_VERSION, IT_TARGET, IT_ADDRESS_SIZE, IT_FUNC, IT_VAR, IT_VAR,
		IT_VAR, IT_FUNC, IT_FUNC, IT_ALIAS, IT_PRAGMA, IT_FUNC, IT_FILE,
		IT_SECTION,
	};
	struct ptx_module *m = parse_ok(module_text);
	const struct ptx_item *it;
	uint32_t i;

	ck_assert_uint_eq(m->nitems, ARRAY_SIZE(kinds));
	for (i = 0; i < m->nitems; i++)
		ck_assert_uint_eq(m->items[i].kind, kinds[i]);
	ck_assert_uint_eq(m->version_major, 8);
	ck_assert_uint_eq(m->version_minor, 4);
	ck_assert_uint_eq(m->sm, 90);
	ck_assert_uint_eq(m->address_size, 64);
	ck_assert(!strncmp(m->text + m->header_end - 16, ".address_size 64", 16));
	it = item_named(m, "vprintf");
	ck_assert_uint_eq(it->linkage, LINK_EXTERN);
	ck_assert(!it->func->defined && it->func->nret == 1);
	ck_assert_uint_eq(it->func->nparams, 2);
	ck_assert_uint_eq(item_named(m, "table")->linkage, LINK_NONE);
	ck_assert_uint_eq(item_named(m, "ptrs")->linkage, LINK_VISIBLE);
	ck_assert_uint_eq(item_named(m, "dyn")->linkage, LINK_EXTERN);
	it = item_named(m, "helper");
	ck_assert_uint_eq(it->linkage, LINK_WEAK);
	ck_assert(!it->func->defined && it->func->nret == 0);
	it = item_named(m, "twice");
	ck_assert(it->func->defined && !it->func->entry);
	ck_assert_uint_eq(it->func->nret, 1);
	ptx_module_free(m);
}
END_TEST

START_TEST(param_layout)
{
	static const struct {
		uint32_t size, align, offset;
	} want[] = { { 1, 1, 0 }, { 8, 8, 8 }, { 20, 8, 16 }, { 4, 4, 36 },
		     { 8, 8, 40 } };
	struct ptx_module *m = parse_ok(module_text);
	const struct ptx_func *f = item_named(m, "k")->func;
	uint32_t i;

	ck_assert(f->entry && f->defined && f->params_known);
	ck_assert_uint_eq(f->nparams, ARRAY_SIZE(want));
	for (i = 0; i < f->nparams; i++) {
		ck_assert_uint_eq(f->params[i].size, want[i].size);
		ck_assert_uint_eq(f->params[i].align, want[i].align);
		ck_assert_uint_eq(f->params[i].offset, want[i].offset);
	}
	ck_assert(tok_is(m, f->params[2].name, "k_s"));
	ck_assert_uint_eq(f->param_bytes, 48);
	ptx_module_free(m);
}
END_TEST

START_TEST(body_statements)
{
	static const struct {
		uint8_t kind;
		uint16_t depth;
		const char *op;
	} want[] = {
		{ ST_DECL, 1, ".reg" },   { ST_DECL, 1, ".local" },
		{ ST_DIR, 1, ".loc" },    { ST_LABEL, 1, NULL },
		{ ST_INSN, 1, "setp" },   { ST_INSN, 1, "bra" },
		{ ST_OPEN, 1, NULL },     { ST_DECL, 2, ".param" },
		{ ST_INSN, 2, "st" },     { ST_DECL, 2, ".param" },
		{ ST_INSN, 2, "call" },   { ST_CLOSE, 2, NULL },
		{ ST_LABEL, 1, NULL },    { ST_DIR, 1, ".callprototype" },
		{ ST_INSN, 1, "mov" },    { ST_LABEL, 1, NULL },
		{ ST_INSN, 1, "exit" },   { ST_INSN, 1, "ret" },
		{ ST_CLOSE, 1, NULL },
	};
	struct ptx_module *m = parse_ok(module_text);
	const struct ptx_func *f = item_named(m, "k")->func;
	const struct ptx_stmt *st;
	uint32_t i;

	ck_assert_uint_eq(f->nstmts, ARRAY_SIZE(want));
	for (i = 0; i < f->nstmts; i++) {
		st = &f->stmts[i];
		ck_assert_msg(st->kind == want[i].kind &&
				      st->depth == want[i].depth,
			      "statement %u: kind %u depth %u", i, st->kind,
			      st->depth);
		if (want[i].op)
			ck_assert(tok_is(m, st->op, want[i].op));
	}
	st = &f->stmts[5];
	ck_assert(st->pred >= 0 && st->pred_neg);
	ck_assert(tok_is(m, (uint32_t)st->pred, "%p1"));
	st = &f->stmts[16];
	ck_assert(st->pred >= 0 && !st->pred_neg);
	ck_assert_int_eq(f->stmts[17].pred, -1);
	ptx_module_free(m);
}
END_TEST

START_TEST(parse_errors)
{
	static const char head[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
	char text[512];

	parse_fails("hello world", "test: PTX line 1 col 1: expected a module-level directive, found 'hello'");
	parse_fails(".target sm_90\n", "test: PTX: no .version directive");
	parse_fails(".version 8.0\n", "no .target sm_NN directive");
	parse_fails(".version 8\n.target sm_90\n", "PTX line 1 col 10: expected a PTX ISA version like 8.0, found '8'");
	parse_fails(".version 8.0\n.target 90\n", "PTX line 2 col 9: expected a target name like sm_90, found '90'");
	parse_fails(".version 8.0\n.target sm_90\n.address_size 48\n", "PTX line 3 col 15: expected 32 or 64, found '48'");
	snprintf(text, sizeof(text), "%s.entry k()\n{\n\tret;\n", head);
	parse_fails(text, "PTX line 5 col 1: expected a function body closed by '}', found '{'");
	snprintf(text, sizeof(text), "%s.entry k()\n{\n\tret\n}\n", head);
	parse_fails(text, "PTX line 7 col 1: expected ';' ending the instruction, found '}'");
	snprintf(text, sizeof(text), "%s.entry k(.param .u32 a\n{\n}\n", head);
	parse_fails(text, "PTX line 5 col 1: expected a parameter type, name, ',' or ')', found '{'");
	snprintf(text, sizeof(text), "%s.global .u32 x = {1, 2;\n", head);
	parse_fails(text, "expected ';' ending the variable declaration, found the end of the text");
	snprintf(text, sizeof(text), "%s.section .debug_info { .b8 1\n", head);
	parse_fails(text, "PTX line 4 col 22: expected a section closed by '}', found '{'");
	snprintf(text, sizeof(text), "%s.entry k()\n{\n\t@ 5 ret;\n}\n", head);
	parse_fails(text, "PTX line 6 col 4: expected a predicate register after '@', found '5'");
	snprintf(text, sizeof(text), "%s.entry k()\n{\n\t.loc 1 2\n\tret;\n}\n", head);
	parse_fails(text, "PTX line 7 col 2: expected a column number, found 'ret'");
	snprintf(text, sizeof(text), "%s.visible .maxntid 1;\n", head);
	parse_fails(text, "expected .entry, .func or a variable after the linkage");
	snprintf(text, sizeof(text), "%s.entry k()\n{\n\t+ x;\n}\n", head);
	parse_fails(text, "expected an instruction, label, directive, '{' or '}', found '+'");
}
END_TEST

/* A ']' missing is reported on its own line, not at the end of the text. */
START_TEST(unclosed_bracket_at_its_line)
{
	static const char text[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
				   ".entry k(.param .u64 p)\n{\n\t.reg .b64 %rd<2>;\n"
				   "\tld.param.u64 %rd1, [p;\n\tld.u64 %rd1, [%rd1+;\n"
				   "\tret;\n}\n";

	parse_fails(text, "test: PTX line 7 col 23: expected ']' closing the '[' of col 21, found ';'");
}
END_TEST

/*
 * NULs ending the text (an image for cuModuleLoadData) are not part of
 * it; one inside it (a comment included) is an error at its line: the
 * driver would stop reading there.
 */
START_TEST(nul_bytes)
{
	static const char head[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
	static const char text[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
				   "// comment\0with a NUL\n.entry k()\n{\n\tret;\n}\n";
	char padded[sizeof(head) + 16] = { 0 };
	struct ptx_module *m = NULL;

	parse_fails_n(text, sizeof(text) - 1,
		      "test: PTX line 4 col 11: a NUL byte inside the text");
	memcpy(padded, head, strlen(head));
	ck_assert_int_eq(ptx_parse("t", padded, sizeof(padded), &m), 0);
	ck_assert_uint_eq(m->len, strlen(head));
	ptx_module_free(m);
}
END_TEST

/* A ';' missing before a new instruction is caught where it matters. */
START_TEST(missing_semicolon_swallows_nothing_silently)
{
	static const char text[] = ".version 8.0\n.target sm_90\n"
				   ".entry k()\n{\n\tmov.u32 %r1, 1\n\tret;\n}\n";
	struct ptx_module *m = NULL;

	/* "mov.u32 %r1, 1 ret;" is one (bad) instruction to the parser;
	 * ptxas rejects it. The parser keeps every byte in the model. */
	ck_assert_int_eq(ptx_parse("t", text, strlen(text), &m), 0);
	ck_assert_ptr_null(check_coverage(m));
	ck_assert_uint_eq(m->items[2].func->nstmts, 2);
	ptx_module_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ptx_parse");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, tokens);
	tcase_add_test(tc, token_errors);
	tcase_add_test(tc, module_items);
	tcase_add_test(tc, param_layout);
	tcase_add_test(tc, body_statements);
	tcase_add_test(tc, parse_errors);
	tcase_add_test(tc, missing_semicolon_swallows_nothing_silently);
	tcase_add_test(tc, unclosed_bracket_at_its_line);
	tcase_add_test(tc, nul_bytes);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
