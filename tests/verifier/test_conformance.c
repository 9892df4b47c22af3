/* SPDX-License-Identifier: MIT */
/*
 * Every program of the bpf_conformance suite that has an expected result
 * must be accepted as a direct run (attach NONE, r1 = its memory).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "verifier/verifier.h"
#include "test_util.h"

#define VECTORS EGPU_SHARED_DIR "/conformance/vectors.tsv"

static int hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	return c - 'a' + 10;
}

/* Decode @len hex digits into a malloc'ed buffer of len / 2 bytes. */
static uint8_t *unhex(const char *s, size_t len)
{
	uint8_t *b = malloc(len / 2 + 1);

	for (size_t i = 0; b && i < len / 2; i++)
		b[i] = (uint8_t)(hex_nibble(s[2 * i]) << 4 |
				 hex_nibble(s[2 * i + 1]));
	return b;
}

/* Tab-separated field @n of @line: pointer and length. */
static const char *field(const char *line, int n, size_t *len)
{
	const char *p = line;

	for (int i = 0; i < n; i++) {
		p = strchr(p, '\t');
		if (!p)
			return NULL;
		p++;
	}
	*len = strcspn(p, "\t\n");
	return p;
}

START_TEST(all_tests_rows_accepted)
{
	FILE *f = fopen(VECTORS, "r");
	char line[16384];
	int rows = 0, accepted = 0;

	ck_assert_msg(f != NULL, "cannot open %s", VECTORS);
	ck_assert(fgets(line, sizeof(line), f)); /* header */
	while (fgets(line, sizeof(line), f)) {
		size_t nlen = 0, plen = 0, mlen = 0, elen = 0;
		const char *name = field(line, 0, &nlen);
		const char *prog = field(line, 3, &plen);
		const char *mem = field(line, 4, &mlen);
		const char *expected = field(line, 5, &elen);
		char pname[128];
		struct prog_spec spec = { .name = pname };
		struct verifier_opts o = {
			.abi = EGPU_HELPERS_CONFORMANCE,
			.attach = EGPU_ATTACH_NONE,
			.ctx_size = (uint32_t)(mlen / 2),
			.ctx_writable = true,
		};
		int err;

		if (!name || !prog || !mem || !expected ||
		    strncmp(name, "tests/", 6) || !elen)
			continue;
		snprintf(pname, sizeof(pname), "%.*s", (int)nlen, name);
		spec.insns = (struct bpf_insn *)unhex(prog, plen);
		spec.insn_cnt = plen / 16;
		err = verifier_run(&spec, NULL, 0, &o, NULL);
		if (err)
			fprintf(stderr, "refused: %s\n", egpu_errmsg());
		else
			accepted++;
		rows++;
		free(spec.insns);
	}
	fclose(f);
	ck_assert_int_eq(rows, 313);
	ck_assert_int_eq(accepted, rows);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verifier_conformance");
	TCase *tc = tcase_create("conformance");

	tcase_add_test(tc, all_tests_rows_accepted);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
