// SPDX-License-Identifier: MIT

package egpu

import "libegpu.dev/egpu/internal/capi"

// Clock is a calibration of the GPU's %globaltimer (what probes read with
// bpf_ktime_get_ns) against the host's CLOCK_MONOTONIC (docs/clock.md).
type Clock struct {
	OffsetNs    int64  // %globaltimer minus CLOCK_MONOTONIC
	ErrorNs     uint64 // bound on GPUToHost's error when measured
	HostNs      uint64 // CLOCK_MONOTONIC at the measurement
	RoundTripNs uint64 // host -> GPU -> host time of the round kept
	StepNs      uint64 // update step of %globaltimer the GPU saw
	Rounds      uint32 // rounds answered; the shortest is kept
}

// GPUToHost is the host time (CLOCK_MONOTONIC, ns) of GPU timer reading
// gpuNs: gpuNs - OffsetNs, clamped to [0, MaxUint64].
func (k Clock) GPUToHost(gpuNs uint64) uint64 {
	return uint64(capi.Clock_gpu_to_host(k.OffsetNs, gpuNs))
}

// ClockSync calibrates the clocks now: a launch and 64 round trips over
// the bus, binding the context to the current CUDA context as any first
// GPU use does. ENODEV without a GPU, EINVAL for an offline context,
// EBUSY when the GPU did not run the calibration kernel within half a
// second.
func (c *Context) ClockSync() (Clock, error) {
	return c.clock(capi.Egpu_clock_sync)
}

// Clock is the last calibration (made when the context first used the
// GPU, or by ClockSync), calibrating now when there is none.
func (c *Context) Clock() (Clock, error) {
	return c.clock(capi.Egpu_clock_get)
}

func (c *Context) clock(read func(capi.Struct_SS_egpu_ctx, capi.Egpu_clock) int) (Clock, error) {
	defer c.lock()()
	if err := c.live(); err != nil {
		return Clock{}, err
	}
	k := capi.NewEgpu_clock()
	if k.Swigcptr() == 0 {
		return Clock{}, newError(ENOMEM, "egpu: out of memory for a clock")
	}
	defer capi.DeleteEgpu_clock(k)
	if _, err := call(func() int { return read(c.h, k) }); err != nil {
		return Clock{}, err
	}
	return Clock{
		OffsetNs:    k.GetOffset_ns(),
		ErrorNs:     k.GetError_ns(),
		HostNs:      k.GetHost_ns(),
		RoundTripNs: k.GetRound_trip_ns(),
		StepNs:      k.GetStep_ns(),
		Rounds:      uint32(k.GetRounds()),
	}, nil
}
