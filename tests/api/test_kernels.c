// SPDX-License-Identifier: MIT
/* Kernel identity in a context, without a GPU: ids unique across modules,
 * stable for the same module text, named on the host; memory sites
 * numbered across modules; maps keyed by kernel id read per kernel name. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "test_util.h"

#define API_OBJ EGPU_TEST_BUILD "/api.bpf.o"
#define API_PTX EGPU_TEST_BUILD "/kernels.ptx"
#define MEM_OBJ EGPU_TEST_BUILD "/memprobe.bpf.o"
#define MEM_PTX EGPU_TEST_BUILD "/memkernels.ptx"

static egpu_ctx *ctx;

static void setup(void)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);

	ctx = egpu_ctx_new(&co);
	ck_assert_ptr_nonnull(ctx);
}

static void teardown(void)
{
	egpu_ctx_free(ctx);
}

/* Instrument @ptx (plus @suffix, making another module text) and copy
 * the kernel ids of the report into @ids. */
static uint32_t instrument(const char *ptx, const char *suffix,
			   uint32_t *ids, struct egpu_report *rep)
{
	size_t n = strlen(ptx) + strlen(suffix);
	char *text = malloc(n + 1), *out = NULL;

	ck_assert_ptr_nonnull(text);
	strcpy(stpcpy(text, ptx), suffix);
	*rep = (struct egpu_report){ .sz = sizeof(*rep) };
	ck_assert_msg(!egpu_instrument_ptx(ctx, text, n, &out, NULL, rep),
		      "instrument: %s", egpu_errmsg());
	for (uint32_t i = 0; i < rep->kernel_cnt; i++)
		ids[i] = rep->kernels[i].kernel_id;
	free(out);
	free(text);
	return rep->kernel_cnt;
}

START_TEST(ids_unique_across_modules_and_stable)
{
	char *api = tu_read_file(API_PTX, NULL), *mem = tu_read_file(MEM_PTX, NULL);
	uint32_t a[4], b[4], again[4], other[4];
	struct egpu_report rep;
	EGPU_OPTS(egpu_kernel_info, info);

	ck_assert_uint_eq(egpu_kernel_cnt(ctx), 0);
	ck_assert_uint_eq(instrument(api, "", a, &rep), 2);
	ck_assert_uint_eq(instrument(mem, "", b, &rep), 1);
	ck_assert_uint_eq(instrument(api, "", again, &rep), 2);
	ck_assert_uint_eq(instrument(api, "// another text\n", other, &rep), 2);
	ck_assert_uint_eq(egpu_kernel_cnt(ctx), 5);
	/* first seen, first numbered; the same text keeps its ids */
	ck_assert_uint_eq(a[0], 0);
	ck_assert_uint_eq(a[1], 1);
	ck_assert_uint_eq(b[0], 2);
	ck_assert_mem_eq(a, again, sizeof(uint32_t) * 2);
	ck_assert_uint_eq(other[0], 3);
	ck_assert_uint_eq(other[1], 4);

	ck_assert_int_eq(egpu_kernel_info(ctx, b[0], &info), 0);
	ck_assert_uint_eq(info.kernel_id, 2);
	ck_assert_str_eq(info.name, "vadd_mem");
	ck_assert_uint_eq(info.module, 1);
	ck_assert_uint_eq(info.index, 0);
	ck_assert_int_eq(egpu_kernel_info(ctx, other[1], &info), 0);
	ck_assert_str_eq(info.demangled, rep.kernels[1].demangled);
	ck_assert_str_eq(info.name, rep.kernels[1].name);
	ck_assert_uint_eq(info.module, 2);
	ck_assert_uint_eq(info.index, 1);
	ck_assert_int_eq(egpu_kernel_info(ctx, 5, &info), EGPU_ENOENT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "no kernel 5"));
	info.sz = 0;
	ck_assert_int_eq(egpu_kernel_info(ctx, 0, &info), EGPU_EINVAL);
	free(api);
	free(mem);
}
END_TEST

/* Sites keep one numbering over the context; kernel ids in them agree. */
START_TEST(mem_sites_numbered_across_modules)
{
	egpu_obj *mo = egpu_load(ctx, MEM_OBJ, NULL);
	char *mem = tu_read_file(MEM_PTX, NULL);
	struct egpu_report rep;
	uint32_t ids[2], first_cnt;

	ck_assert_ptr_nonnull(mo);
	ck_assert_int_eq(egpu_attach_all(mo), 1);
	instrument(mem, "", ids, &rep);
	first_cnt = rep.mem_site_cnt;
	ck_assert_uint_gt(first_cnt, 0);
	ck_assert_uint_eq(rep.mem_sites[0].site, 0);
	instrument(mem, "// another text\n", ids, &rep);
	ck_assert_uint_eq(ids[0], 1);
	ck_assert_uint_eq(rep.mem_site_cnt, first_cnt);
	ck_assert_uint_eq(rep.site_base, first_cnt);
	for (uint32_t i = 0; i < rep.mem_site_cnt; i++) {
		ck_assert_uint_eq(rep.mem_sites[i].site, first_cnt + i);
		ck_assert_uint_eq(rep.mem_sites[i].kernel_id, ids[0]);
	}
	/* the first text again: its sites again */
	instrument(mem, "", ids, &rep);
	ck_assert_uint_eq(ids[0], 0);
	ck_assert_uint_eq(rep.mem_sites[0].site, 0);
	free(mem);
}
END_TEST

/* One kernel name compiled twice (two module texts) reads as one. */
START_TEST(map_read_per_kernel_name)
{
	egpu_obj *obj = egpu_load(ctx, API_OBJ, NULL);
	egpu_map *counts = egpu_obj_map(obj, "counts");
	char *api = tu_read_file(API_PTX, NULL);
	struct egpu_report rep;
	uint32_t a[2], b[2];
	uint64_t v, sum = 0;

	instrument(api, "", a, &rep);
	instrument(api, "// specialised again\n", b, &rep);
	v = 5;
	ck_assert_int_eq(egpu_map_update(counts, &a[0], &v, EGPU_ANY), 0);
	v = 7;
	ck_assert_int_eq(egpu_map_update(counts, &b[0], &v, EGPU_ANY), 0);
	ck_assert_int_eq(egpu_map_lookup_kernel(counts, "saxpy", &sum), 2);
	ck_assert_uint_eq(sum, 12);
	/* fill<int> has no entry: 0, and no error */
	ck_assert_int_eq(egpu_map_lookup_kernel(counts, "fill", &sum), 0);
	ck_assert_uint_eq(sum, 0);
	ck_assert_int_eq(egpu_map_lookup_kernel(counts, "s*", &sum), 2);
	ck_assert_int_eq(egpu_map_lookup_kernel(counts, "nothing", &sum),
			 EGPU_ENOENT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "nothing"));
	free(api);
}
END_TEST

/* Translate once: every module reuses the probes' PTX (one translation,
 * the same output each time); closing the object drops its translations. */
START_TEST(probes_translated_once_per_context)
{
	egpu_obj *mo = egpu_load(ctx, MEM_OBJ, NULL);
	char *mem = tu_read_file(MEM_PTX, NULL), *first = NULL, *out = NULL;

	ck_assert_int_eq(egpu_attach_all(mo), 1);
	ck_assert_int_eq(egpu_instrument_ptx(ctx, mem, strlen(mem), &first, NULL, NULL), 0);
	for (int i = 0; i < 3; i++) {
		free(out);
		out = NULL;
		ck_assert_int_eq(egpu_instrument_ptx(ctx, mem, strlen(mem), &out, NULL, NULL), 0);
	}
	ck_assert_uint_eq(jit_cache_size(ctx), 1);
	ck_assert(!strcmp(out, first));
	egpu_obj_close(mo);
	ck_assert_uint_eq(jit_cache_size(ctx), 0);
	free(out);
	free(first);
	free(mem);
}
END_TEST

/* A module whose PTX targets an older GPU than the context (PyTorch's
 * compute_75 PTX) gets the probes translated for its own target: it links,
 * keeps its .target, and the newer modules keep theirs. */
START_TEST(older_module_gets_probes_for_its_target)
{
	egpu_obj *mo = egpu_load(ctx, MEM_OBJ, NULL);
	char *mem = tu_read_file(MEM_PTX, NULL), *old_out = NULL, *out = NULL;
	char *at = strstr(mem, ".target sm_90");

	ck_assert_ptr_nonnull(at);
	ck_assert_int_eq(egpu_attach_all(mo), 1);
	ck_assert_int_eq(egpu_instrument_ptx(ctx, mem, strlen(mem), &out, NULL, NULL), 0);
	memcpy(at, ".target sm_75", strlen(".target sm_75"));
	ck_assert_msg(!egpu_instrument_ptx(ctx, mem, strlen(mem), &old_out, NULL, NULL),
		      "sm_75 module: %s", egpu_errmsg());
	ck_assert_ptr_nonnull(strstr(old_out, ".target sm_75"));
	ck_assert_ptr_null(strstr(old_out, "sm_90"));
	ck_assert_ptr_nonnull(strstr(out, ".target sm_90"));
	ck_assert_uint_eq(jit_cache_size(ctx), 2); /* one per target */
	egpu_obj_close(mo);
	free(old_out);
	free(out);
	free(mem);
}
END_TEST

/* Replace the first @from in @s (a malloc'ed string) by @to. */
static char *replaced(char *s, const char *from, const char *to)
{
	char *at = strstr(s, from), *r;

	ck_assert_ptr_nonnull(at);
	r = malloc(strlen(s) - strlen(from) + strlen(to) + 1);
	ck_assert_ptr_nonnull(r);
	memcpy(r, s, (size_t)(at - s));
	strcpy(stpcpy(r + (at - s), to), at + strlen(from));
	free(s);
	return r;
}

/* A module written for a GPU below the device runtime's floor (XLA's
 * sm_50 PTX) is retargeted to the context's GPU: .target and .version
 * raised, the rest untouched, and ptxas takes the result for sm_90. */
START_TEST(sm50_module_retargeted)
{
	egpu_obj *mo = egpu_load(ctx, MEM_OBJ, NULL);
	char *mem = tu_read_file(MEM_PTX, NULL), *out = NULL, *v, log[4096];

	ck_assert_int_eq(egpu_attach_all(mo), 1);
	mem = replaced(mem, ".target sm_90", ".target sm_50");
	v = strstr(mem, ".version ");
	ck_assert_ptr_nonnull(v);
	memcpy(v, ".version 4.2", strlen(".version 4.2"));
	ck_assert_msg(!egpu_instrument_ptx(ctx, mem, strlen(mem), &out, NULL, NULL),
		      "sm_50 module: %s", egpu_errmsg());
	ck_assert_ptr_nonnull(strstr(out, ".target sm_90"));
	ck_assert_ptr_null(strstr(out, "sm_50"));
	ck_assert_ptr_null(strstr(out, ".version 4.2"));
	if (tu_have_ptxas())
		ck_assert_msg(tu_ptxas(out, strlen(out), "sm_90", true, log, sizeof(log)),
			      "ptxas: %s", log);
	egpu_obj_close(mo);
	free(out);
	free(mem);
}
END_TEST

static const char legacy_shfl_ptx[] =
	".version 4.2\n"
	".target sm_50\n"
	".address_size 64\n"
	".visible .entry legacy(.param .u64 p)\n"
	"{\n"
	"\t.reg .b32 %r<4>;\n"
	"\t.reg .b64 %rd<3>;\n"
	"\tld.param.u64 %rd1, [p];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tshfl.idx.b32 %r2, %r1, 0, 31;\n"
	"\tst.global.u32 [%rd2], %r2;\n"
	"\tret;\n"
	"}\n";

/* shfl without .sync is gone from sm_70 on: such a module keeps its
 * target, and where its probes need the device runtime (sm_75 and up)
 * the error says which instruction on which line stands in the way. */
START_TEST(sm50_module_with_legacy_shfl_explained)
{
	egpu_obj *mo = egpu_load(ctx, MEM_OBJ, NULL);
	char *out = NULL;
	struct strbuf sb;

	ck_assert_int_eq(egpu_attach_all(mo), 1);
	ck_assert_int_ne(egpu_instrument_ptx(ctx, legacy_shfl_ptx,
					     strlen(legacy_shfl_ptx), &out, NULL, NULL), 0);
	ck_assert_msg(strstr(egpu_errmsg(), "PTX line 11: 'shfl' without .sync"),
		      "%s", egpu_errmsg());
	ck_assert_ptr_null(out);
	sb_init(&sb);
	ck_assert_int_eq(ptx_retarget(legacy_shfl_ptx, strlen(legacy_shfl_ptx), 90, &sb),
			 EGPU_ENOTSUP);
	sb_free(&sb);
	egpu_obj_close(mo);
}
END_TEST

/* The .sync forms retarget; a .version already high enough stays. */
START_TEST(retarget_keeps_sync_forms_and_newer_versions)
{
	char *ptx = replaced(strdup(legacy_shfl_ptx), "shfl.idx.b32",
			     "shfl.sync.idx.b32");
	struct strbuf sb;
	char log[4096];

	ptx = replaced(ptx, ", 31;", ", 31, -1;");
	ptx = replaced(ptx, ".version 4.2", ".version 8.1");
	sb_init(&sb);
	ck_assert_int_eq(ptx_retarget(ptx, strlen(ptx), 90, &sb), 0);
	ck_assert_ptr_nonnull(strstr(sb.buf, ".version 8.1\n.target sm_90\n"));
	ck_assert_ptr_nonnull(strstr(sb.buf, "shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;"));
	if (tu_have_ptxas())
		ck_assert_msg(tu_ptxas(sb.buf, sb.len, "sm_90", true, log, sizeof(log)),
			      "ptxas: %s", log);
	sb_free(&sb);
	free(ptx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kernels");
	TCase *tc = tcase_create("identity");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ids_unique_across_modules_and_stable);
	tcase_add_test(tc, mem_sites_numbered_across_modules);
	tcase_add_test(tc, map_read_per_kernel_name);
	tcase_add_test(tc, probes_translated_once_per_context);
	tcase_add_test(tc, older_module_gets_probes_for_its_target);
	tcase_add_test(tc, sm50_module_retargeted);
	tcase_add_test(tc, sm50_module_with_legacy_shfl_explained);
	tcase_add_test(tc, retarget_keeps_sync_forms_and_newer_versions);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
