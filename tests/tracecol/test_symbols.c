// SPDX-License-Identifier: MIT
/*
 * Symbolization and stack building without a GPU: names from this
 * executable's .symtab (no -rdynamic), demangling, a stripped library's
 * "lib.so+0xOFF" frames, and collect_build_calls() on hand-made chunks:
 * frames of the collector and of a linked-in CUDA runtime trimmed, the
 * API's clean name appended, equal stacks shared, driver ids aliased.
 */
#include <check.h>
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test_util.h"
#include "trace/collect_impl.h"

#define FAKE_LIB EGPU_TEST_BUILD "/libtracecol_fake.so"

static void *fake;
static uintptr_t fake_launch, fake_cudart, fake_hidden;
/* gives the functions below a body longer than one byte */
static volatile int sink;

static __attribute__((noinline, used)) void app_outer(void)
{
	sink++;
}

static __attribute__((noinline, used)) void app_caller(void)
{
	sink++;
}

/* a C++ name, as nvcc's host code has them */
void demo_helper(void) __asm__("_Z11demo_helperi");
__attribute__((noinline, used)) void demo_helper(void)
{
	sink++;
}

static void setup(void)
{
	void *(*hidden)(void);

	fake = dlopen(FAKE_LIB, RTLD_NOW);
	ck_assert_msg(fake, "%s", dlerror());
	fake_launch = (uintptr_t)dlsym(fake, "cudaLaunchKernel");
	fake_cudart = (uintptr_t)dlsym(fake,
				       "_ZN6cudart19cudaApiLaunchKernelEv");
	hidden = (void *(*)(void))dlsym(fake, "fake_hidden_addr");
	ck_assert(fake_launch && fake_cudart && hidden);
	fake_hidden = (uintptr_t)hidden();
}

static void teardown(void)
{
	dlclose(fake);
}

static uintptr_t bias_of(uintptr_t addr)
{
	struct link_map *lm = NULL;
	Dl_info info;

	ck_assert(dladdr1((void *)addr, &info, (void **)&lm, RTLD_DL_LINKMAP));
	return lm->l_addr;
}

START_TEST(names_local_functions)
{
	struct strpool names = { 0 };
	struct symbolizer *s = sym_new(&names);
	const char *a;

	ck_assert_ptr_nonnull(s);
	a = sym_name(s, (uintptr_t)app_caller);
	ck_assert_str_eq(a, "app_caller");
	/* cached: the same interned string */
	ck_assert_ptr_eq(sym_name(s, (uintptr_t)app_caller), a);
	ck_assert_str_eq(sym_name(s, (uintptr_t)app_outer + 1), "app_outer");
	ck_assert_str_eq(sym_name(s, (uintptr_t)demo_helper),
			 "demo_helper(int)");
	ck_assert_int_eq(sym_role(s, (uintptr_t)app_caller), SYM_SELF);
	ck_assert_int_eq(sym_role(s, (uintptr_t)getpid), SYM_LIBC);
	sym_free(s);
	strpool_free(&names);
}
END_TEST

START_TEST(names_stripped_library)
{
	struct strpool names = { 0 };
	struct symbolizer *s = sym_new(&names);
	char want[128];
	void *heap = malloc(16);

	ck_assert_ptr_nonnull(s);
	/* exported names survive strip in .dynsym */
	ck_assert_str_eq(sym_name(s, fake_launch), "cudaLaunchKernel");
	ck_assert_str_eq(sym_name(s, fake_cudart),
			 "cudart::cudaApiLaunchKernel()");
	ck_assert_int_eq(sym_role(s, fake_launch), SYM_OTHER);
	snprintf(want, sizeof(want), "libtracecol_fake.so+0x%llx",
		 (unsigned long long)(fake_hidden + 2 - bias_of(fake_hidden)));
	ck_assert_str_eq(sym_name(s, fake_hidden + 2), want);
	/* in no module at all */
	snprintf(want, sizeof(want), "0x%llx",
		 (unsigned long long)(uintptr_t)heap);
	ck_assert_str_eq(sym_name(s, (uintptr_t)heap), want);
	free(heap);
	sym_free(s);
	strpool_free(&names);
}
END_TEST

static struct collect *collect_new_test(uint32_t max_frames)
{
	struct collect *c = calloc(1, sizeof(*c));

	ck_assert_ptr_nonnull(c);
	c->opts.max_frames = max_frames;
	c->raw_frames = max_frames + 32;
	c->stopped = true;
	pthread_mutex_init(&c->lock, NULL);
	/* mapped, as collect_free() unmaps it */
	c->chunks = mmap(NULL, chunk_bytes(1024), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(c->chunks, MAP_FAILED);
	c->chunks->frame_cap = 1024;
	return c;
}

/* Append a call whose stack is @n return addresses, innermost first. */
static void add_call(struct collect *c, uint8_t kind, uint32_t corr,
		     const char *name, const uintptr_t *ret, uint16_t n)
{
	struct call_chunk *k = c->chunks;
	struct raw_call *call = &k->calls[k->call_n++];

	*call = (struct raw_call){ .corr = corr, .kind = kind, .name = name,
		.frame_n = n, .frame_at = k->frame_n, .start = corr,
		.end = corr + 1 };
	for (uint16_t i = 0; i < n; i++)
		k->frames[k->frame_n++] = (void *)ret[i];
}

static void add_kernel(struct collect *c, uint32_t corr)
{
	c->ops = realloc(c->ops, (c->op_n + 1) * sizeof(*c->ops));
	ck_assert_ptr_nonnull(c->ops);
	c->ops[c->op_n++] = (struct trace_op){ .kind = TRACE_KERNEL,
		.corr = corr, .start = corr, .end = corr + 5, .name = "k",
		.api = TRACE_NONE };
}

static const struct trace_api *api_of(const struct collect *c, uint32_t corr)
{
	for (size_t i = 0; i < c->td.api_cnt; i++)
		if (c->td.apis[i].corr == corr)
			return &c->td.apis[i];
	ck_abort_msg("no call with correlation id %u", corr);
	return NULL;
}

static void ck_stack(const struct collect *c, uint32_t corr,
		     const char *const *want, uint32_t n)
{
	const struct trace_api *a = api_of(c, corr);
	const struct trace_stack *st;

	ck_assert_uint_lt(a->stack, c->td.stack_cnt);
	st = &c->td.stacks[a->stack];
	ck_assert_uint_eq(st->n, n);
	for (uint32_t i = 0; i < n; i++)
		ck_assert_str_eq(st->frames[i], want[i]);
}

START_TEST(stacks_trimmed_and_shared)
{
	struct collect *c = collect_new_test(64);
	uintptr_t libc_start = (uintptr_t)dlsym(RTLD_DEFAULT,
						"__libc_start_main");
	/* collector frame, static runtime internals, the app, libc start */
	const uintptr_t launch[] = { (uintptr_t)app_caller + 1,
		fake_cudart + 1, fake_launch + 1, (uintptr_t)app_caller + 1,
		(uintptr_t)app_outer + 1, libc_start + 1 };
	const uintptr_t driver[] = { fake_hidden + 1,
		(uintptr_t)app_caller + 1, (uintptr_t)app_outer + 1 };
	const char *const want_launch[] = { "app_outer", "app_caller",
		"cudaLaunchKernel" };
	char hidden[128];
	const char *want_driver[] = { "app_outer", "app_caller", hidden,
		"cuLaunchKernel" };

	ck_assert(libc_start);
	snprintf(hidden, sizeof(hidden), "libtracecol_fake.so+0x%llx",
		 (unsigned long long)(fake_hidden - bias_of(fake_hidden)));
	add_call(c, CALL_LAUNCH, 10, "cudaLaunchKernel_v7000", launch, 6);
	add_call(c, CALL_LAUNCH, 11, "cudaLaunchKernel_v7000", launch, 6);
	add_call(c, CALL_LAUNCH, 12, "cuLaunchKernel", driver, 3);
	add_call(c, CALL_COPY, 13, "cuMemcpyHtoD_v2_ptds", driver, 3);
	add_call(c, CALL_ALIAS, 99, NULL, NULL, 0);
	c->chunks->calls[c->chunks->call_n - 1].outer = 10;
	add_kernel(c, 99);
	add_kernel(c, 12);

	ck_assert_int_eq(collect_build_calls(c), 0);
	ck_assert_uint_eq(c->td.api_cnt, 4);
	ck_assert_uint_eq(c->counts.launches, 3);
	ck_assert_uint_eq(c->td.stack_cnt, 3);
	ck_stack(c, 10, want_launch, 3);
	ck_assert_uint_eq(api_of(c, 11)->stack, api_of(c, 10)->stack);
	ck_stack(c, 12, want_driver, 4);
	ck_assert_str_eq(api_of(c, 13)->name, "cuMemcpyHtoD");
	/* ops sorted by start; the GPU record with the driver call's id
	 * now carries the runtime call's */
	ck_assert_uint_eq(c->ops[0].corr, 12);
	ck_assert_uint_eq(c->ops[1].corr, 10);
	c->td.ops = c->ops;
	c->td.op_cnt = c->op_n;
	ck_assert_uint_eq(trace_join(&c->td), 2);
	collect_free(c);
}
END_TEST

START_TEST(stacks_keep_innermost_frames)
{
	struct collect *c = collect_new_test(1);
	const uintptr_t launch[] = { fake_cudart + 1,
		(uintptr_t)app_caller + 1, (uintptr_t)app_outer + 1 };
	const char *const want[] = { "app_caller", "cudaGraphLaunch" };

	add_call(c, CALL_GRAPH, 7, "cudaGraphLaunch_v10000", launch, 3);
	ck_assert_int_eq(collect_build_calls(c), 0);
	ck_stack(c, 7, want, 2);
	collect_free(c);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tracecol_symbols");
	TCase *tc = tcase_create("symbols");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, names_local_functions);
	tcase_add_test(tc, names_stripped_library);
	tcase_add_test(tc, stacks_trimmed_and_shared);
	tcase_add_test(tc, stacks_keep_innermost_frames);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite(), true);
}
