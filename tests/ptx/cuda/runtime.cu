// A stand-in for the device runtime: helpers the probe modules call,
// compiled with -rdc so they stay in the PTX as .visible functions.
#include <cstdint>

__device__ unsigned long long egpu_dev_events;

extern "C" __device__ uint64_t egpu_dev_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

extern "C" __device__ uint64_t egpu_dev_count(uint64_t by)
{
	return atomicAdd(&egpu_dev_events, (unsigned long long)by);
}
