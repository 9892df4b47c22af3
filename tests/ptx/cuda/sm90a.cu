// Built for sm_90a: setmaxnreg exists only there; the output must keep
// .target sm_90a.
__global__ void __launch_bounds__(384, 1) producer_consumer(float *out)
{
	if (threadIdx.x < 128) {
		asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
		out[threadIdx.x] = 0.0f;
	} else {
		asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
		out[threadIdx.x] = 1.0f;
	}
}

__global__ void plain_add(float *p, float v)
{
	p[threadIdx.x] += v;
}
