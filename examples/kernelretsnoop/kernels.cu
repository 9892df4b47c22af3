// SPDX-License-Identifier: MIT
// A kernel with stragglers: in every 16th warp one lane does 50 times the
// work of the others. The others leave at once with PTX `exit` (nvcc would
// otherwise merge both paths before a single `ret`, where the warp waits
// for its slowest lane), so the straggler's lag shows in the exit times.

extern "C" __global__ void straggle(float *x, int rounds)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int warp = i / 32, lane = i % 32;
	float v = x[i];

	if (warp % 16 != 5 || lane != 7) {
		for (int r = 0; r < rounds; r++)
			v = v * 0.999f + 0.5f;
		x[i] = v;
		asm volatile("exit;");
	}
	for (int r = 0; r < 50 * rounds; r++)
		v = v * 0.999f + 0.5f;
	x[i] = v;
}
