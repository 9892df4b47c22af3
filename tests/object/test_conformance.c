/* SPDX-License-Identifier: MIT */
/*
 * All 360 rows of the conformance vectors through object_parse_raw() and
 * verifier_check_object() under the conformance helper convention.
 *
 * A row must be refused when it carries an `error` or when it is a
 * negative/ row without an expected result (the 45 unused-field rows).
 * Every other row, negative/incorrect_return_value_high_bits included
 * (a valid program whose expected value is wrong on purpose), must load.
 */
#include <stdio.h>

#include "object_test.h"

#define VECTORS EGPU_SHARED_DIR "/conformance/vectors.tsv"

struct row {
	char *name;
	char *program;
	char *expected;
	char *error;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	ck_abort_msg("bad hex digit '%c'", c);
	return 0;
}

static uint8_t *unhex(const char *hex, size_t *len)
{
	size_t n = strlen(hex) / 2;
	uint8_t *p = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(strlen(hex) % 2, 0);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
	*len = n;
	return p;
}

/* Split a TSV line in place: name, min_isa, groups, program, mem, expected, error. */
static void split_row(char *line, struct row *r)
{
	char *f[7];

	for (int i = 0; i < 7; i++) {
		f[i] = strsep(&line, "\t\n");
		ck_assert_ptr_nonnull(f[i]);
	}
	*r = (struct row){ f[0], f[3], f[5], f[6] };
}

static bool must_refuse(const struct row *r)
{
	return r->error[0] ||
	       (!strncmp(r->name, "negative/", 9) && !r->expected[0]);
}

/* Returns 1 if the row was refused. */
static int check_row(const struct row *r)
{
	struct object_spec s;
	size_t len;
	uint8_t *prog = unhex(r->program, &len);
	int err;

	err_clear();
	err = object_parse_raw(prog, len, &s);
	if (!err && (err = verifier_check_object(&s, EGPU_HELPERS_CONFORMANCE)))
		object_spec_free(&s);
	free(prog);
	if (!must_refuse(r)) {
		ck_assert_msg(!err, "%s refused: %s", r->name, egpu_errmsg());
		object_spec_free(&s);
		return 0;
	}
	ck_assert_msg(err < 0, "%s was accepted", r->name);
	ck_assert_msg(strstr(egpu_errmsg(), "prog 'prog': insn "),
		      "%s: message '%s' names no instruction", r->name,
		      egpu_errmsg());
	return 1;
}

START_TEST(all_vectors)
{
	FILE *f = fopen(VECTORS, "r");
	char *line = NULL;
	size_t cap = 0, rows = 0, refused = 0;
	struct row r;

	ck_assert_msg(f, "cannot open " VECTORS);
	ck_assert_int_gt(getline(&line, &cap, f), 0); /* header */
	while (getline(&line, &cap, f) > 0) {
		split_row(line, &r);
		refused += check_row(&r);
		rows++;
	}
	free(line);
	fclose(f);
	ck_assert_uint_eq(rows, 360);
	ck_assert_uint_eq(refused, 46); /* 45 unused-field rows + error.data */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("object_conformance");
	TCase *tc = tcase_create("vectors");

	tcase_add_test(tc, all_vectors);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
