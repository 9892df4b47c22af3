/* SPDX-License-Identifier: MIT */
/*
 * Subprogram linking: two_calls calls mid (which calls leaf) and other;
 * shares calls leaf too. The odd constants mark each function's body.
 */
#include <egpu/bpf_helpers.h>

static __noinline int leaf(int x)
{
	return x * 1111 + 1;
}

__noinline int mid(int x)
{
	return leaf(x) ^ 2222;
}

__noinline int other(int x)
{
	return x * 3333 + 4;
}

GPU_ENTRY("k") int two_calls(void *ctx)
{
	int v = (long)ctx & 0xff;

	return mid(v) + other(v);
}

GPU_EXIT("k") int shares(void *ctx)
{
	return leaf((long)ctx & 0xff) + 5;
}

char LICENSE[] SEC("license") = "GPL";
