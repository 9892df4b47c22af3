/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "object_test.h"
#include "test_util.h"

void *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long n;
	void *buf;

	ck_assert_msg(f, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_gt(n, 0);
	rewind(f);
	buf = malloc(n);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	*len = n;
	return buf;
}

int test_run_suite(Suite *s)
{
	return tu_run_suite(s, true);
}
