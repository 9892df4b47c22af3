/* SPDX-License-Identifier: MIT */
/*
 * GPU-free checks of the device runtime and the map layout: the embedded
 * PTX defines every map helper with the calling convention translated code
 * uses, defines nothing else, and ptxas accepts it (alone and called from a
 * hand-written caller); the layout and hash agree with the host maps;
 * dev_map_new() refuses bad specs before touching the GPU.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "egpu.h"
#include "core/helpers.h"
#include "cuda/cu.h"
#include "device/device.h"
#include "maps/dev_map.h"
#include "maps/layout.h"
#include "test_util.h"

static const int map_helpers[] = { HELPER_MAP_LOOKUP, HELPER_MAP_UPDATE,
				   HELPER_MAP_DELETE };

static int count_substr(const char *s, const char *sub)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, sub)); p += strlen(sub))
		n++;
	return n;
}

/* The line of the runtime PTX that declares function @name, or NULL. */
static const char *func_line(const char *name)
{
	char pat[128];
	const char *p;

	snprintf(pat, sizeof(pat), ") %s(", name);
	p = strstr(device_runtime_ptx, pat);
	if (!p)
		return NULL;
	while (p > device_runtime_ptx && p[-1] != '\n')
		p--;
	return p;
}

START_TEST(embedded_text_is_whole)
{
	ck_assert_uint_eq(strlen(device_runtime_ptx), device_runtime_ptx_len);
	/* the lowest version its code needs, not nvcc's (docs/attach.md) */
	ck_assert_ptr_nonnull(strstr(device_runtime_ptx, "\n.version 6.3\n"));
	ck_assert_ptr_nonnull(strstr(device_runtime_ptx, "\n.target sm_75"));
	ck_assert_ptr_nonnull(strstr(device_runtime_ptx, "\n.address_size 64"));
}
END_TEST

/* egpu_dev_<helper name>(.param .b64 x nargs) returning .param .b64. */
START_TEST(defines_every_map_helper)
{
	const struct helper_info *h = helper_find(map_helpers[_i], 0);
	char name[96], param[128];
	const char *line;

	ck_assert_ptr_nonnull(h);
	snprintf(name, sizeof(name), "egpu_dev_%s", h->name);
	line = func_line(name);
	ck_assert_msg(line, "%s missing from the runtime PTX", name);
	ck_assert_msg(!strncmp(line, ".visible .func", 14) &&
		      strstr(line, "(.param .b64 func_retval0)") <
		      strstr(line, name),
		      "%s: not a visible function returning .b64", name);
	snprintf(param, sizeof(param), ".param .b64 %s_param_", name);
	ck_assert_int_eq(count_substr(device_runtime_ptx, param), h->nargs);
}
END_TEST

/* Merged into application PTX, no other name may appear at module level. */
START_TEST(defines_nothing_else)
{
	static const char *const kinds[] = { ".func", ".entry", ".global",
					     ".const", ".shared" };
	char *text = strdup(device_runtime_ptx);

	ck_assert_ptr_nonnull(text);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] != '.')
			continue; /* module-level directives start a line */
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (strstr(line, kinds[k]))
				ck_assert_msg(strstr(line, "egpu_dev_"),
					      "stray module-level symbol: %s", line);
	}
	free(text);
}
END_TEST

/* The runtime, alone or followed by a caller, through ptxas -c. */
static void ptxas_accepts(const char *extra_file)
{
	size_t rt_len = strlen(device_runtime_ptx), extra_len = 0;
	char *extra = extra_file ? tu_read_file(extra_file, &extra_len) : NULL;
	char *ptx = malloc(rt_len + extra_len + 1), log[4096];

	ck_assert_ptr_nonnull(ptx);
	memcpy(ptx, device_runtime_ptx, rt_len);
	memcpy(ptx + rt_len, extra ? extra : "", extra_len + 1);
	ck_assert_msg(tu_ptxas(ptx, rt_len + extra_len, "sm_90", true, log, sizeof(log)),
		      "ptxas refused the runtime PTX (%s): %s",
		      extra_file ? extra_file : "alone", log);
	free(ptx);
	free(extra);
}

START_TEST(ptxas_accepts_runtime)
{
	ptxas_accepts(NULL);
}
END_TEST

/* A caller written by hand against the calling convention links with it. */
START_TEST(ptxas_accepts_runtime_with_caller)
{
	ptxas_accepts(EGPU_TEST_DATA "/abi_kernel.ptx");
}
END_TEST

START_TEST(slot_layout)
{
	ck_assert_uint_eq(dev_slot_size(4, 4), 24);
	ck_assert_uint_eq(dev_slot_size(5, 12), 32);
	ck_assert_uint_eq(dev_slot_key_offset(), 8);
	ck_assert_uint_eq(dev_slot_value_offset(4), 16);
	ck_assert_uint_eq(dev_slot_value_offset(9), 24);
	ck_assert_uint_eq(sizeof(struct dev_map_desc), 64);
}
END_TEST

/* A claim advances the generation; state changes keep it. */
START_TEST(slot_generations)
{
	uint32_t w = dev_slot_claim_word(DEV_SLOT_EMPTY, DEV_SLOT_BUSY);

	ck_assert_uint_eq(dev_slot_state_of(w), DEV_SLOT_BUSY);
	w = dev_slot_word(w, DEV_SLOT_DELETED);
	ck_assert_uint_eq(w, DEV_SLOT_GEN_ONE | DEV_SLOT_DELETED);
	w = dev_slot_claim_word(w, DEV_SLOT_USED);
	ck_assert_uint_eq(w, 2 * DEV_SLOT_GEN_ONE | DEV_SLOT_USED);
	ck_assert_uint_eq(dev_slot_claim_word(UINT32_MAX, DEV_SLOT_USED),
			  DEV_SLOT_USED); /* wraps */
}
END_TEST

/* FNV-1a 32-bit reference values, the hash host_map.c uses too. */
START_TEST(hash_is_fnv1a)
{
	ck_assert_uint_eq(dev_hash_key("", 0), 0x811c9dc5u);
	ck_assert_uint_eq(dev_hash_key("a", 1), 0xe40c292cu);
	ck_assert_uint_eq(dev_hash_key("foobar", 6), 0xbf9cf968u);
}
END_TEST

static int new_map(uint32_t type, uint32_t key_size, uint32_t value_size,
		   uint32_t max_entries, uint32_t threads)
{
	struct map_spec spec = { .name = "m", .type = type,
				     .key_size = key_size,
				     .value_size = value_size,
				     .max_entries = max_entries };
	struct dev_map *m = NULL;
	int err = dev_map_new(&spec, threads, &m);

	ck_assert_ptr_null(m);
	ck_assert_str_ne(egpu_errmsg(), "");
	return err;
}

START_TEST(bad_specs_refused_before_the_gpu)
{
	ck_assert_int_eq(new_map(EGPU_MAP_HASH, 0, 8, 16, 0), EGPU_EINVAL);
	ck_assert_int_eq(new_map(EGPU_MAP_HASH, 4, 0, 16, 0), EGPU_EINVAL);
	ck_assert_int_eq(new_map(EGPU_MAP_ARRAY, 4, 8, 0, 0), EGPU_EINVAL);
	ck_assert_int_eq(new_map(EGPU_MAP_ARRAY, 8, 8, 16, 0), EGPU_EINVAL);
	/* A ring map's GPU data is its ring's dev_ring (lib/maps/ring.h). */
	ck_assert_int_eq(new_map(EGPU_MAP_RINGBUF, 0, 0, 4096, 0), EGPU_EINVAL);
	ck_assert_int_eq(new_map(99, 4, 8, 16, 0), EGPU_ENOTSUP);
	ck_assert_int_eq(new_map(EGPU_MAP_PERCPU_ARRAY, 4, 8, 16, 3), EGPU_EINVAL);
	ck_assert_int_eq(new_map(EGPU_MAP_HASH, 4, 8, 1u << 31, 0), EGPU_E2BIG);
	ck_assert_int_eq(new_map(EGPU_MAP_PERTHREAD_ARRAY, 4, UINT32_MAX,
				 UINT32_MAX, 1u << 31), EGPU_E2BIG);
}
END_TEST

START_TEST(no_gpu_is_a_clear_error)
{
	ck_assert_int_eq(new_map(EGPU_MAP_ARRAY, 4, 8, 16, 0), EGPU_ENODEV);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "map 'm'"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("device");
	TCase *ptx = tcase_create("runtime_ptx"), *layout = tcase_create("layout");

	tcase_add_test(ptx, embedded_text_is_whole);
	tcase_add_loop_test(ptx, defines_every_map_helper, 0,
			    sizeof(map_helpers) / sizeof(map_helpers[0]));
	tcase_add_test(ptx, defines_nothing_else);
	if (EGPU_PTXAS[0]) {
		tcase_add_test(ptx, ptxas_accepts_runtime);
		tcase_add_test(ptx, ptxas_accepts_runtime_with_caller);
		tcase_set_timeout(ptx, 60);
	} else {
		printf("no ptxas found at configure time: PTX not assembled\n");
	}
	tcase_add_test(layout, slot_layout);
	tcase_add_test(layout, slot_generations);
	tcase_add_test(layout, hash_is_fnv1a);
	tcase_add_test(layout, bad_specs_refused_before_the_gpu);
	if (!cu()) /* no GPU here: its absence must be a clear error */
		tcase_add_test(layout, no_gpu_is_a_clear_error);
	suite_add_tcase(s, ptx);
	suite_add_tcase(s, layout);
	return tu_run_suite(s, true);
}
