/* SPDX-License-Identifier: MIT */
/*
 * Bounded resources and messages for bad input: a zero .bss is never
 * copied, maps too large for the machine are refused before anything is
 * allocated, directories say so, bad map flags are named (truncated ELFs:
 * test_elf.c).
 */
#include "egpu.h"
#include "maps/host_map.h"
#include "object_test.h"

#define BPF_OBJ(name) EGPU_TEST_BUILD "/" name ".bpf.o"

static const struct map_spec *find_map(const struct object_spec *s,
				       const char *name)
{
	for (size_t i = 0; i < s->map_cnt; i++)
		if (!strcmp(s->maps[i].name, name))
			return &s->maps[i];
	ck_abort_msg("no map '%s'", name);
	return NULL;
}

START_TEST(zero_bss_is_not_copied)
{
	struct object_spec s;
	size_t len;
	void *elf = tu_read_file(BPF_OBJ("big_bss"), &len);
	const struct map_spec *bss, *data;

	ck_assert_uint_lt(len, 64 << 10);
	ck_assert_ok(object_parse_elf(elf, len, "big_bss.bpf.o", &s));
	bss = find_map(&s, "big_bss.bss");
	data = find_map(&s, "big_bss.data");
	ck_assert_uint_eq(bss->value_size, 4000u << 20);
	ck_assert_ptr_null(bss->init);
	ck_assert_ptr_nonnull(data->init);
	ck_assert_uint_eq(((const uint8_t *)data->init)[1234], 1);
	object_spec_free(&s);
	free(elf);
}
END_TEST

/* AddressSanitizer's shadow of a 4000 MB allocation is 500 MB. */
#define SHADOW_MB (TU_SANITIZED ? 500 : 0)

/* Loading it (host maps included) costs far less than its 4000 MB. */
START_TEST(zero_bss_loads_cheaply)
{
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	long before = tu_peak_rss_mb();
	egpu_obj *obj;

	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, BPF_OBJ("big_bss"), NULL);
	if (!obj)
		/* A machine with less memory refuses it, naming the map. */
		ck_assert_msg(egpu_errcode() == EGPU_ENOMEM &&
			      strstr(egpu_errmsg(), "big_bss.bss"), "%s", egpu_errmsg());
	ck_assert_msg(tu_peak_rss_mb() - before < 256 + SHADOW_MB, "loading took %ld MB",
		      tu_peak_rss_mb() - before);
	egpu_ctx_free(ctx);
}
END_TEST

/*
 * The same object with its BTF renamed away (as a fuzzed one had it):
 * the .bss is still known zero by libbpf's name for its map, never read
 * (its shared mapping would allocate the 4000 MB a read touches).
 */
START_TEST(zero_bss_without_btf_is_not_read)
{
	struct object_spec s;
	size_t len, renamed = 0;
	uint8_t *elf = (uint8_t *)tu_read_file(BPF_OBJ("big_bss"), &len);
	long before = tu_peak_rss_mb();

	/* ".BTF" ends the names ".rel.BTF" and ".rel.BTF.ext" share */
	for (size_t i = 0; i + 4 < len; i++)
		if (!memcmp(elf + i, ".BTF", 4) && (elf[i + 4] == '\0' || elf[i + 4] == '.')) {
			elf[i + 1] = 'X';
			renamed++;
		}
	ck_assert_uint_ge(renamed, 1);
	ck_assert_ok(object_parse_elf(elf, len, "big_bss.bpf.o", &s));
	ck_assert_ptr_null(find_map(&s, "big_bss.bss")->init);
	ck_assert_msg(tu_peak_rss_mb() - before < 256 + SHADOW_MB, "parsing took %ld MB",
		      tu_peak_rss_mb() - before);
	object_spec_free(&s);
	free(elf);
}
END_TEST

START_TEST(huge_array_is_refused_before_allocating)
{
	egpu_ctx *ctx = egpu_ctx_new(NULL);

	ck_assert_ptr_null(egpu_load(ctx, BPF_OBJ("huge_map"), NULL));
	ck_assert_int_eq(egpu_errcode(), EGPU_ENOMEM);
	ck_assert_msg(strstr(egpu_errmsg(), "map 'tebibyte': 1099511627776 bytes exceed"),
		      "%s", egpu_errmsg());
	egpu_ctx_free(ctx);
}
END_TEST

START_TEST(wide_hash_is_refused)
{
	struct map_spec spec = { .name = "wide", .type = EGPU_MAP_HASH,
				     .key_size = 4, .value_size = 8,
				     .max_entries = 1u << 31 };
	struct host_map *m = NULL;

	ck_assert_fails(host_map_new(&spec, &m), EGPU_ENOMEM,
			"map 'wide': 2147483648 entries: a hash map holds at most");
	ck_assert_ptr_null(m);
}
END_TEST

START_TEST(directory_says_so)
{
	egpu_ctx *ctx = egpu_ctx_new(NULL);

	ck_assert_ptr_null(egpu_load(ctx, EGPU_TEST_BUILD, NULL));
	ck_assert_int_eq(egpu_errcode(), EGPU_EIO);
	ck_assert_msg(strstr(egpu_errmsg(), "is a directory"), "%s", egpu_errmsg());
	egpu_ctx_free(ctx);
}
END_TEST

START_TEST(bad_update_flags_are_named)
{
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	egpu_obj *obj = egpu_load(ctx, BPF_OBJ("big_bss"), NULL);
	egpu_map *data;
	uint32_t key = 0;
	uint8_t value[4096] = { 0 };

	if (!obj)
		return; /* refused on a small machine: zero_bss_loads_cheaply */
	data = egpu_obj_map(obj, "big_bss.data");
	ck_assert_int_eq(egpu_map_update(data, &key, value, 7), EGPU_EINVAL);
	ck_assert_msg(strstr(egpu_errmsg(), "unknown flags 0x7"), "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_map_delete(data, &key), EGPU_EINVAL);
	ck_assert_msg(strstr(egpu_errmsg(), "array entries cannot be deleted"),
		      "%s", egpu_errmsg());
	egpu_ctx_free(ctx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("object_limits");
	TCase *tc = tcase_create("limits");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, zero_bss_is_not_copied);
	tcase_add_test(tc, zero_bss_loads_cheaply);
	tcase_add_test(tc, zero_bss_without_btf_is_not_read);
	tcase_add_test(tc, huge_array_is_refused_before_allocating);
	tcase_add_test(tc, wide_hash_is_refused);
	tcase_add_test(tc, directory_says_so);
	tcase_add_test(tc, bad_update_flags_are_named);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
