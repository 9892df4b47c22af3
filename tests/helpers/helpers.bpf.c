// SPDX-License-Identifier: MIT
// Direct runs calling user helpers of every signature shape, and calls
// the verifier must refuse (test_helpers.c registers the helpers).
#include <egpu/bpf_helpers.h>

#define H_ADD5 0x10000  /* u64 (u64, u64, u64, u64, u64) */
#define H_NOTE 0x10001  /* void (u64) */
#define H_SUM 0x10002   /* u64 (const u8[16], u64) */
#define H_FILL 0x10003  /* u64 (u8[8]) */
#define H_NONE 0x10004  /* u64 () */
#define H_UNREGISTERED 0x10fff

static __u64 (*h_add5)(__u64, __u64, __u64, __u64, __u64) = (void *)H_ADD5;
static void (*h_note)(__u64) = (void *)H_NOTE;
static long (*h_note_as_long)(__u64) = (void *)H_NOTE;
static __u64 (*h_sum)(const void *, __u64) = (void *)H_SUM;
static __u64 (*h_fill)(void *) = (void *)H_FILL;
static __u64 (*h_none)(void) = (void *)H_NONE;
static __u64 (*h_unregistered)(void) = (void *)H_UNREGISTERED;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[16]);
} bytes SEC(".maps");

const char ro[16] = "read only bytes";

SEC("egpu/run")
int five(void *ctx)
{
	return h_add5(1, 2, 3, 4, 5);
}

SEC("egpu/run")
int note(void *ctx)
{
	h_note(7);
	return 1;
}

SEC("egpu/run")
int stack_buf(void *ctx)
{
	__u8 b[16];

	for (int i = 0; i < 16; i++)
		b[i] = i;
	return h_sum(b, 100);
}

SEC("egpu/run")
int map_buf(void *ctx)
{
	__u32 key = 0;
	__u8 *v = bpf_map_lookup_elem(&bytes, &key);

	if (!v)
		return -1;
	for (int i = 0; i < 16; i++)
		v[i] = 2;
	return h_sum(v, 0);
}

SEC("egpu/run")
int out_buf(void *ctx)
{
	__u64 x = 0;

	h_fill(&x);
	return x == 0x1111111111111111ull;
}

SEC("egpu/run")
int no_args(void *ctx)
{
	return h_none();
}

/* ---- refused ---- */

SEC("egpu/run")
int scalar_for_buf(void *ctx)
{
	return h_sum((void *)5, 1);
}

SEC("egpu/run")
int short_buf(void *ctx)
{
	__u8 b[8] = { 0 };

	return h_sum(b, 1);
}

SEC("egpu/run")
int uninit_buf(void *ctx)
{
	__u8 b[16];

	b[0] = 1;
	return h_sum(b, 1);
}

SEC("egpu/run")
int void_result(void *ctx)
{
	return h_note_as_long(1);
}

SEC("egpu/run")
int write_read_only(void *ctx)
{
	return h_fill((void *)ro);
}

SEC("egpu/run")
int unregistered(void *ctx)
{
	return h_unregistered();
}
