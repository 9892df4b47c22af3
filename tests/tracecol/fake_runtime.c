// SPDX-License-Identifier: MIT
/*
 * libtracecol_fake.so, stripped after linking: stands for a CUDA runtime
 * linked into an application (exported API and cudart:: internals keep
 * their names through .dynsym) and for stripped code (a static function
 * has no name left).
 */
#define EXPORT __attribute__((visibility("default"), noinline, used))

/* gives the functions below a body longer than one byte */
static volatile int sink;

EXPORT void cudaLaunchKernel(void)
{
	sink++;
}

EXPORT void cudart_api(void) __asm__("_ZN6cudart19cudaApiLaunchKernelEv");
EXPORT void cudart_api(void)
{
	sink++;
}

static __attribute__((noinline, used)) void hidden_work(void)
{
	sink++;
}

EXPORT void *fake_hidden_addr(void)
{
	return (void *)hidden_work;
}
