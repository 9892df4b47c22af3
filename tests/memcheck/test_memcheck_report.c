// SPDX-License-Identifier: MIT
/*
 * egpu memcheck's report without a GPU: bad accesses deduplicated by site
 * (the first kept, the rest counted), at most max_shown sites printed and
 * the rest counted, kernels and lines from the host's site table (or the
 * PTX line, or the site's number), where each access lay (the allocation
 * table's words for global memory, the window's for shared and local),
 * text and JSON.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "memcheck/memcheck_report.h"
#include "memcheck/memcheck_table.h"
#include "core/core.h"
#include "egpu/ctx.h"
#include "test_util.h"

static bool site_info(void *user, uint32_t site, struct mc_site *out)
{
	(void)user;
	switch (site) {
	case 7:
		*out = (struct mc_site){ "vecadd(float const*, float*, int)",
					 "bugs/global_after.cu", 12 };
		return true;
	case 8:
		*out = (struct mc_site){ "k\"quoted\"", NULL, 345 };
		return true;
	default:
		return false;
	}
}

static void where(void *user, const struct mc_violation *v, char *buf,
		  size_t n)
{
	mc_table_describe(user, v->addr, v->size, buf, n);
}

static struct mc_violation bad(uint32_t site, uint16_t space, uint64_t addr)
{
	return (struct mc_violation){ .addr = addr, .site = site, .size = 4,
				      .kind = EGPU_MEM_STORE, .space = space,
				      .bound = 1024, .block = { 3, 0, 0 },
				      .thread = { 255, 1, 0 } };
}

static int no_state(void *u, uint32_t s, uint32_t v, void *st)
{
	(void)u, (void)s, (void)v, (void)st;
	return 0;
}

static int no_tag(void *u, uint32_t tag, void *st)
{
	(void)u, (void)tag, (void)st;
	return 0;
}

static int no_publish(void *u, const void *ix, size_t n)
{
	(void)u, (void)ix, (void)n;
	return 0;
}

static struct mc_table *table_with_one(void)
{
	struct mc_backend be = { .publish = no_publish, .set_state = no_state,
				 .set_tag = no_tag, .max_slots = 16 };
	struct mc_table *t = mc_table_new(&be);

	ck_assert_int_eq(mc_table_alloc(t, 0x7f0000000000ull, 4194304,
					MC_KIND_ALLOC), 0);
	return t;
}

START_TEST(dedup_and_text)
{
	struct mc_table *t = table_with_one();
	EGPU_OPTS(mc_report_opts, o, .site = site_info, .where = where,
		  .user = t);
	struct mc_report *r = mc_report_new(&o);
	struct mc_violation v = bad(7, EGPU_SPACE_GLOBAL, 0x7f0000400000ull);
	char *text;

	ck_assert_ptr_nonnull(r);
	text = mc_report_text(r, false);
	ck_assert_str_eq(text, "egpu memcheck: no errors\n");
	free(text);
	for (int i = 0; i < 1024; i++) {
		ck_assert_int_eq(mc_report_add(r, &v), 0);
		v.addr += 4; /* later accesses do not replace the first */
	}
	ck_assert_uint_eq(mc_report_total(r), 1024);
	ck_assert_uint_eq(mc_report_sites(r), 1);
	text = mc_report_text(r, false);
	ck_assert_str_eq(text,
		"egpu memcheck: invalid 4-byte global store in vecadd(float const*, float*, int) at bugs/global_after.cu:12\n"
		"    block (3,0,0) thread (255,1,0), address 0x7f0000400000: just past the end of a 4,194,304-byte cudaMalloc allocation\n"
		"    and 1,023 more at this site\n"
		"egpu memcheck: 1,024 errors at 1 site\n");
	free(text);
	mc_report_free(r);
	mc_table_free(t);
}
END_TEST

/* The GPU sends each site's first access and counts the rest. */
START_TEST(counts_from_the_gpu)
{
	struct mc_report *r = mc_report_new(NULL);
	struct mc_violation a = bad(7, EGPU_SPACE_GLOBAL, 0x1000);
	struct mc_violation b = bad(9, EGPU_SPACE_GLOBAL, 0x2000);

	ck_assert_int_eq(mc_report_add(r, &a), 0);
	ck_assert_int_eq(mc_report_add(r, &b), 0);
	ck_assert_uint_eq(mc_report_site_at(r, 0), 7);
	ck_assert_uint_eq(mc_report_site_at(r, 1), 9);
	mc_report_set_count(r, 9, 500);
	mc_report_set_count(r, 7, 0);  /* below what was seen: kept */
	mc_report_set_count(r, 8, 99); /* a site never seen: nothing */
	ck_assert_uint_eq(mc_report_total(r), 501);
	ck_assert_uint_eq(mc_report_sites(r), 2);
	mc_report_free(r);
}
END_TEST

START_TEST(windows_and_unknown_sites)
{
	EGPU_OPTS(mc_report_opts, o, .site = site_info);
	struct mc_report *r = mc_report_new(&o);
	struct mc_violation sh = bad(8, EGPU_SPACE_SHARED, 1024);
	struct mc_violation lo = bad(9, EGPU_SPACE_LOCAL, 1022);
	char *text;

	ck_assert_int_eq(mc_report_add(r, &sh), 0);
	ck_assert_int_eq(mc_report_add(r, &lo), 0);
	text = mc_report_text(r, false);
	ck_assert_str_eq(text,
		"egpu memcheck: invalid 4-byte shared store in k\"quoted\" at line 345 of its PTX\n"
		"    block (3,0,0) thread (255,1,0), address 0x400: just past the end of the block's 1,024-byte shared memory\n"
		"egpu memcheck: invalid 4-byte local store in site 9 at line 0 of its PTX\n"
		"    block (3,0,0) thread (255,1,0), address 0x3fe: at offset 1,022 of the thread's 1,024-byte local frame, running 2 bytes past its end\n"
		"egpu memcheck: 2 errors at 2 sites\n");
	free(text);
	text = mc_report_text(r, true);
	ck_assert_str_eq(text,
		"{\"reports\":["
		"{\"kernel\":\"k\\\"quoted\\\"\",\"file\":null,\"line\":345,\"site\":8,\"kind\":\"store\",\"space\":\"shared\",\"size\":4,\"address\":\"0x400\",\"block\":[3,0,0],\"thread\":[255,1,0],\"where\":\"just past the end of the block's 1,024-byte shared memory\",\"count\":1},"
		"{\"kernel\":\"site 9\",\"file\":null,\"line\":0,\"site\":9,\"kind\":\"store\",\"space\":\"local\",\"size\":4,\"address\":\"0x3fe\",\"block\":[3,0,0],\"thread\":[255,1,0],\"where\":\"at offset 1,022 of the thread's 1,024-byte local frame, running 2 bytes past its end\",\"count\":1}"
		"],\"errors\":2,\"sites\":2,\"sites_not_shown\":0,\"errors_not_shown\":0}\n");
	free(text);
	mc_report_free(r);
}
END_TEST

START_TEST(at_most_n_shown)
{
	EGPU_OPTS(mc_report_opts, o, .max_shown = 2);
	struct mc_report *r = mc_report_new(&o);
	char *text;

	for (uint32_t s = 0; s < 5; s++)
		for (uint32_t k = 0; k <= s; k++) {
			struct mc_violation v = bad(100 + s, EGPU_SPACE_GLOBAL,
						    0x1000);

			ck_assert_int_eq(mc_report_add(r, &v), 0);
		}
	ck_assert_uint_eq(mc_report_total(r), 15);
	ck_assert_uint_eq(mc_report_sites(r), 5);
	text = mc_report_text(r, false);
	ck_assert_int_eq(tu_count(text, "egpu memcheck: invalid"), 2);
	ck_assert_ptr_nonnull(strstr(text, "site 100 at"));
	ck_assert_ptr_nonnull(strstr(text, "site 101 at"));
	ck_assert_ptr_null(strstr(text, "site 102"));
	ck_assert_ptr_nonnull(strstr(text,
		"egpu memcheck: 15 errors at 5 sites (12 at sites not shown)\n"));
	free(text);
	text = mc_report_text(r, true);
	ck_assert_ptr_nonnull(strstr(text,
		"\"errors\":15,\"sites\":5,\"sites_not_shown\":3,\"errors_not_shown\":12}"));
	free(text);
	mc_report_free(r);
}
END_TEST

START_TEST(bad_opts)
{
	struct mc_report_opts o = { .sz = 3 };

	struct mc_report *r;

	ck_assert_ptr_null(mc_report_new(&o));
	r = mc_report_new(NULL);
	ck_assert_ptr_nonnull(r);
	mc_report_free(r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("memcheck_report");
	TCase *tc = tcase_create("report");

	tcase_add_test(tc, dedup_and_text);
	tcase_add_test(tc, counts_from_the_gpu);
	tcase_add_test(tc, windows_and_unknown_sites);
	tcase_add_test(tc, at_most_n_shown);
	tcase_add_test(tc, bad_opts);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite(), true) ? 1 : 0;
}
