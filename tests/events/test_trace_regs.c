/* SPDX-License-Identifier: MIT */
/*
 * A traced kernel's register cap (ptx_trace_reg_cap; docs/events.md,
 * "Registers: the plain kernel's occupancy"), no GPU: the most registers
 * that keep the untraced kernel's blocks per SM, for blocks of a declared
 * size and of any size, never below the runtime's floor nor above 255;
 * caps lowered to an application's JIT limit.
 * On a GPU, trace_link_gpu checks what the driver makes of it.
 */
#include <check.h>
#include <string.h>

#include "ptx/ptx.h"
#include "test_util.h"

/* An H100's or H200's SM: 65,536 registers, 2,048 threads. */
#define SM_REGS 65536
#define SM_THREADS 2048

static uint32_t cap(uint32_t plain, uint32_t threads)
{
	return ptx_trace_reg_cap(plain, threads, SM_REGS, SM_THREADS, 32);
}

/* Blocks of @threads an SM holds at @regs, counted apart from the code. */
static uint32_t blocks(uint32_t regs, uint32_t threads)
{
	uint32_t granted = (regs + 7) / 8 * 8, n = 0;

	while ((n + 1) * threads <= SM_THREADS &&
	       (n + 1) * ((threads + 31) / 32) * 32 * granted <= SM_REGS)
		n++;
	return n;
}

START_TEST(declared_block_sizes)
{
	/* SGEMM's tiled kernel: 1,024 threads, two blocks at 32, one above */
	ck_assert_uint_eq(cap(32, 1024), 32);
	/* one block at 40 already: all of the class up to 64 is free */
	ck_assert_uint_eq(cap(40, 1024), 64);
	/* a Triton kernel of 4 warps at 168: three blocks up to 168 */
	ck_assert_uint_eq(cap(168, 128), 168);
	ck_assert_uint_eq(cap(161, 128), 168);
	/* one block of 256 threads at 200 and at 255 alike */
	ck_assert_uint_eq(cap(200, 256), 255);
	/* every plain count and block size: the same blocks, and the most
	 * registers that give them */
	for (uint32_t t = 32; t <= 1024; t += 32)
		for (uint32_t r = 32; r <= 255; r++) {
			uint32_t c = cap(r, t);

			if (!blocks(r, t))
				continue;
			ck_assert_uint_ge(c, r);
			ck_assert_uint_le(c, 255);
			ck_assert_uint_eq(blocks(c, t), blocks(r, t));
			if (c + 8 <= 255)
				ck_assert_uint_lt(blocks(c + 8, t), blocks(r, t));
		}
}
END_TEST

START_TEST(any_block_size)
{
	/* the allocation granule only: every size keeps its blocks */
	ck_assert_uint_eq(cap(33, 0), 40);
	ck_assert_uint_eq(cap(40, 0), 40);
	ck_assert_uint_eq(cap(250, 0), 255);
	for (uint32_t r = 32; r <= 255; r++)
		for (uint32_t t = 32; t <= 1024; t += 32)
			ck_assert_uint_eq(blocks(cap(r, 0), t), blocks(r, t));
}
END_TEST

START_TEST(floor_and_unknown_sm)
{
	/* never below what the runtime the kernel calls takes */
	ck_assert_uint_eq(cap(12, 0), 32);
	ck_assert_uint_eq(cap(12, 256), 32);
	ck_assert_uint_eq(ptx_trace_reg_cap(12, 256, SM_REGS, SM_THREADS, 48), 48);
	/* no SM limits: the granule alone */
	ck_assert_uint_eq(ptx_trace_reg_cap(40, 1024, 0, 0, 32), 40);
	/* a block the SM cannot hold at the plain count: not raised */
	ck_assert_uint_eq(cap(100, 1024), 104);
}
END_TEST

/* An application's JIT limit below a cap: the cap lowered in place,
 * other .maxnreg directives left as they are. */
START_TEST(caps_lowered)
{
	char ptx[] = ".entry a()\n.maxnreg 32 // egpu trace\n{\n}\n"
		     ".entry b()\n.maxnreg 128 // egpu trace\n{\n}\n"
		     ".entry c()\n.maxnreg 16 // egpu trace\n{\n}\n"
		     ".entry d()\n.maxnreg 64\n{\n}\n";

	ptx_trace_caps_lower(ptx, 0);
	ck_assert_ptr_nonnull(strstr(ptx, ".maxnreg 128 // egpu trace\n"));
	ptx_trace_caps_lower(ptx, 24);
	ck_assert_str_eq(ptx, ".entry a()\n.maxnreg 24 // egpu trace\n{\n}\n"
			 ".entry b()\n.maxnreg 24  // egpu trace\n{\n}\n"
			 ".entry c()\n.maxnreg 16 // egpu trace\n{\n}\n"
			 ".entry d()\n.maxnreg 64\n{\n}\n");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("trace_regs");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, declared_block_sizes);
	tcase_add_test(tc, any_block_size);
	tcase_add_test(tc, floor_and_unknown_sm);
	tcase_add_test(tc, caps_lowered);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
