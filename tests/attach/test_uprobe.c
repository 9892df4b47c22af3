// SPDX-License-Identifier: MIT
/*
 * Host probes without a GPU: the uprobe section forms, their programs run
 * on the CPU back end over a struct egpu_pt_regs laid out as x86-64's
 * struct pt_regs (libbpf's BPF_KPROBE/PT_REGS_* compiled for bpf with
 * __TARGET_ARCH_x86 read it), and the refusals of GPU-only and kernel
 * helpers.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "egpu.h"
#include "egpu/ctx.h"
#include "object/object.h"
#include "test_util.h"

#define UPROBE_OBJ EGPU_TEST_BUILD "/uprobe.bpf.o"
#define KERNEL_OBJ EGPU_TEST_BUILD "/uprobe_kernel.bpf.o"

static egpu_ctx *ctx;
static egpu_obj *obj;

static void setup(void)
{
	ctx = egpu_ctx_new(NULL);
	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, UPROBE_OBJ, NULL);
	ck_assert_msg(obj, "load: %s", egpu_errmsg());
}

static void teardown(void)
{
	egpu_ctx_free(ctx);
}

static void section_is(const char *section, int at, const char *func)
{
	char *f = NULL;
	int got = object_attach_from_section(section, &f);

	ck_assert_msg(got == at, "%s: attach %d, expected %d (%s)", section, got,
		      at, egpu_errmsg());
	ck_assert_str_eq(f, func);
	free(f);
}

START_TEST(section_forms)
{
	char *f = NULL;

	section_is("uprobe", EGPU_ATTACH_UPROBE, "");
	section_is("uretprobe", EGPU_ATTACH_URETPROBE, "");
	section_is("uprobe/cudaMalloc", EGPU_ATTACH_UPROBE, "cudaMalloc");
	section_is("uprobe//usr/lib/libcudart.so.13:cudaLaunchKernel",
		   EGPU_ATTACH_UPROBE, "cudaLaunchKernel");
	section_is("uretprobe/./a:b.so:cuMemAlloc", EGPU_ATTACH_URETPROBE,
		   "cuMemAlloc");
	/* not a uprobe: a section that only starts alike */
	section_is("uprobes_x", EGPU_ATTACH_NONE, "");
	ck_assert_int_eq(object_attach_from_section("uprobe/lib.so:cudaFree+4", &f),
			 EGPU_EFORMAT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "an offset into the function"));
	free(f);
}
END_TEST

START_TEST(programs_name_their_functions)
{
	static const struct {
		const char *prog, *func, *at;
	} want[] = {
		{ "on_launch", "cudaLaunchKernel", "uprobe" },
		{ "on_alloc_ret", "cuMemAlloc", "uretprobe" },
		{ "plain", "", "uprobe" },
		{ "on_entry", "*", "entry" },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		egpu_prog *p = egpu_obj_prog(obj, want[i].prog);

		ck_assert_ptr_nonnull(p);
		ck_assert_str_eq(egpu_prog_kernel(p), want[i].func);
		ck_assert_str_eq(egpu_attach_point_str(egpu_prog_attach_point(p)),
				 want[i].at);
	}
	/* host probes are left to egpu attach: only the GPU probe attaches */
	ck_assert_int_eq(egpu_attach_all(obj), 1);
}
END_TEST

static uint64_t seen(uint32_t k)
{
	uint64_t v = 0;

	ck_assert_int_eq(egpu_map_lookup(egpu_obj_map(obj, "seen"), &k, &v), 0);
	return v;
}

static uint64_t run(const char *prog, struct egpu_pt_regs *regs)
{
	EGPU_OPTS(egpu_run_opts, ro, .ctx = regs, .ctx_len = sizeof(*regs));

	ck_assert_msg(!egpu_prog_run(egpu_obj_prog(obj, prog), &ro), "%s: %s",
		      prog, egpu_errmsg());
	return ro.retval;
}

START_TEST(uprobe_reads_arguments_as_pt_regs)
{
	/* cudaLaunchKernel(func, {2,3,4}, {32,1,1}, args, 77, stream) */
	uint64_t stack[3] = { 0, 77, 0x5555 };
	struct egpu_pt_regs r = {
		.di = 0x1234, .si = 2 | 3ull << 32, .dx = 4,
		.cx = 32 | 1ull << 32, .r8 = 1, .r9 = 0xabcdef,
		.sp = (uintptr_t)stack,
	};

	ck_assert_uint_eq(sizeof(r), 168);
	run("on_launch", &r);
	ck_assert_uint_eq(seen(0), 0x1234);
	ck_assert_uint_eq(seen(1), 2 | 3ull << 32);
	ck_assert_uint_eq(seen(2), 4);
	ck_assert_uint_eq(seen(3), 32 | 1ull << 32);
	ck_assert_uint_eq(seen(4), 1);
	ck_assert_uint_eq(seen(5), 0xabcdef);
	ck_assert_uint_eq(seen(6), 0);  /* bpf_probe_read_user succeeded */
	ck_assert_uint_eq(seen(7), 77); /* the first stack argument */
}
END_TEST

START_TEST(uretprobe_gets_the_result_in_ax)
{
	struct egpu_pt_regs r = { .ax = (uint64_t)-2 };

	run("on_alloc_ret", &r);
	ck_assert_uint_eq(seen(8), (uint64_t)-2);
	/* an unreadable address: -EFAULT and zeroes, the process lives */
	ck_assert_uint_eq(seen(9), (uint64_t)-EFAULT);
	ck_assert_uint_eq(seen(10), 0);
	r.di = 41;
	ck_assert_uint_eq(run("plain", &r), 42);
}
END_TEST

START_TEST(host_probes_take_pt_regs_only)
{
	uint64_t small[4] = { 0 };
	EGPU_OPTS(egpu_run_opts, ro, .ctx = small, .ctx_len = sizeof(small));
	EGPU_OPTS(egpu_run_opts, gpu, .backend = EGPU_BACKEND_GPU);
	struct egpu_pt_regs r = { 0 };

	ck_assert_int_eq(egpu_prog_run(egpu_obj_prog(obj, "plain"), &ro),
			 EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "struct egpu_pt_regs (168 bytes)"));
	gpu.ctx = &r;
	gpu.ctx_len = sizeof(r);
	ck_assert_int_eq(egpu_prog_run(egpu_obj_prog(obj, "plain"), &gpu),
			 EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "runs on the CPU back end"));
}
END_TEST

START_TEST(gpu_and_kernel_helpers_are_refused)
{
	const char *why = NULL;
	egpu_obj *k;

	ck_assert_int_ne(egpu_prog_verdict(egpu_obj_prog(obj, "gpu_only"), &why), 0);
	ck_assert_ptr_nonnull(strstr(why, "get_thread_idx#505 is not allowed in uprobes"));
	/* an unknown helper refuses its own program, not the object */
	k = egpu_load(ctx, KERNEL_OBJ, NULL);
	ck_assert_msg(k, "%s", egpu_errmsg());
	ck_assert_int_ne(egpu_prog_verdict(egpu_obj_next_prog(k, NULL), &why), 0);
	ck_assert_ptr_nonnull(strstr(why, "unknown helper 35"));
	ck_assert_ptr_nonnull(strstr(why, "a Linux kernel helper"));
	egpu_obj_close(k);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attach_uprobe");
	TCase *tc = tcase_create("uprobe");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, section_forms);
	tcase_add_test(tc, programs_name_their_functions);
	tcase_add_test(tc, uprobe_reads_arguments_as_pt_regs);
	tcase_add_test(tc, uretprobe_gets_the_result_in_ax);
	tcase_add_test(tc, host_probes_take_pt_regs_only);
	tcase_add_test(tc, gpu_and_kernel_helpers_are_refused);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
