// SPDX-License-Identifier: MIT
// The kernels the event GPU tests instrument: work does a little per
// thread; wait_host waits for the host consumer.
extern "C" __global__ void work(float *x, int n, int rounds)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	float v = x[i];
	for (int r = 0; r < rounds; r++)
		v = v * 0.999f + 0.5f;
	x[i] = v;
}

// consumed_while_the_kernel_runs: every thread's entry probe emits a record;
// then thread 0 waits until the host consumer says, through host-mapped
// *flag, that it has taken enough of them, so the kernel cannot end before
// records were consumed. The wait gives up after timeout_ns (globaltimer):
// the test then fails instead of hanging. *seen: 1 flag seen, 0 timed out.
extern "C" __global__ void wait_host(const volatile unsigned *flag,
				     unsigned long long timeout_ns,
				     unsigned *seen)
{
	unsigned long long t0, t;

	if (blockIdx.x || threadIdx.x)
		return;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do {
		if (*flag) {
			*seen = 1;
			return;
		}
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	} while (t - t0 < timeout_ns);
	*seen = 0;
}

// Traced by bpf_egpu_trace_warp (events_gpu: warp_records_give_every_address):
// thread i < n stores out[i] (affine: a stride of 4) and loads in[j(i)],
// where j permutes each group of 32 (lane l reads lane (7 l + 3) mod 32:
// never affine for a whole warp); in holds n rounded up to 32 floats.
extern "C" __global__ void gather(float *out, const float *in, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	out[i] = in[(i & ~31) | ((7 * (i & 31) + 3) & 31)];
}

// Traced with batched reservations (events_gpu:
// batched_warp_records_of_divergent_lanes): the odd and even lanes of a
// warp store apart, and the odd ones loop once or three times (i & 2),
// lane 31 four times (a record of one lane), so a warp's lanes lead
// records in separate groups; thread i < n stores out[k * n + i] for each
// k it loops (out holds 4 n floats).
extern "C" __global__ void diverge(float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	if (i & 1) {
		for (int k = 0; k < 1 + (i & 2) + ((i & 31) == 31); k++)
			out[k * n + i] = (float)k;
	} else {
		out[i] = -1.0f;
	}
}

// Traced into a lossless ring through the splicer's trace mode
// (span_gpu_trace): rounds of two stores, thread i < n storing out[k * n +
// i] for k < ROUNDS, the block meeting at __syncthreads after each round:
// a warp's span holds its round's records and is published before the
// barrier, which the warps of its block wait at for the others (out holds
// ROUNDS n floats).
#define ROUNDS 8
extern "C" __global__ void barrier_rounds(float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	for (int k = 0; k < ROUNDS; k += 2) {
		if (i < n) {
			out[k * n + i] = (float)k;
			out[(k + 1) * n + i] = (float)(k + 1);
		}
		__syncthreads();
	}
}

// Traced into a ring in host memory (span_gpu_trap): thread i < n stores
// out[i], then one thread of the middle block traps, which ends the
// grid, every exit probe unrun (spans left open: egpu_ringbuf_reclaim).
extern "C" __global__ void trap_after(float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	out[i] = 1.0f;
	if (i == (n / 2 & ~255))
		asm volatile("trap;");
}
