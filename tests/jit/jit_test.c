/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "jit_test.h"

/* Loading happens before any test runs: no ck_assert there. */
static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int hexval(char c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* Decode @hex into a fresh buffer; *len gets its size in bytes. */
static uint8_t *unhex(const char *hex, size_t *len)
{
	size_t n = strlen(hex) / 2;
	uint8_t *p = malloc(n ? n : 1);

	if (!p)
		die("malloc");
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
	*len = n;
	return p;
}

/* Parse one row into @v; false if it has no expected result. */
static bool parse_row(char *line, struct vector *v)
{
	char *field[7];
	size_t n;

	for (int i = 0; i < 7; i++)
		field[i] = strsep(&line, "\t\n");
	if (!field[6]) {
		errno = EINVAL;
		die("conformance vectors: short row");
	}
	if (!field[5][0])
		return false;
	snprintf(v->name, sizeof(v->name), "%s", field[0]);
	v->insns = (struct bpf_insn *)unhex(field[3], &n);
	v->insn_cnt = n / sizeof(struct bpf_insn);
	v->mem = unhex(field[4], &v->mem_len);
	v->expected = strtoull(field[5], NULL, 16);
	return true;
}

size_t vectors_with_result(struct vector **out)
{
	FILE *f = fopen(EGPU_SHARED_DIR "/conformance/vectors.tsv", "r");
	struct vector *v = NULL;
	char *line = NULL;
	size_t cap = 0, n = 0;

	if (!f || getline(&line, &cap, f) <= 0) /* the header */
		die(EGPU_SHARED_DIR "/conformance/vectors.tsv");
	while (getline(&line, &cap, f) > 0) {
		v = realloc(v, (n + 1) * sizeof(*v));
		if (!v)
			die("realloc");
		n += parse_row(line, &v[n]);
	}
	free(line);
	fclose(f);
	*out = v;
	return n;
}

struct jit_input test_input(const char *name, const struct bpf_insn *insns,
			    size_t n, int helpers)
{
	return (struct jit_input){ .name = name, .insns = insns, .insn_cnt = n,
				   .helpers = helpers };
}

uint64_t run_host(const struct jit_input *in, void *mem, size_t len)
{
	struct jit_host *jh = NULL;
	void *copy = NULL;
	uint64_t r0;
	int err = jit_host_new(in, &jh);

	ck_assert_msg(!err, "%s: jit_host_new: %d %s", in->name, err,
		      egpu_errmsg());
	if (len) {
		copy = malloc(len);
		ck_assert_ptr_nonnull(copy);
		memcpy(copy, mem, len);
	}
	r0 = jit_host_call(jh, copy, len);
	if (len)
		memcpy(mem, copy, len);
	free(copy);
	jit_host_free(jh);
	return r0;
}
