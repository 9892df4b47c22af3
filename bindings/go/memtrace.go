// SPDX-License-Identifier: MIT

package egpu

import "libegpu.dev/egpu/internal/capi"

// MaxRegistersAny is MemTraceOptions.MaxRegisters for no cap: ptxas
// takes as many registers as it sees fit.
const MaxRegistersAny = uint32(capi.EGPU_MAX_REGISTERS_ANY)

// MemTraceOptions choose what the splicer's trace mode records and how
// traced kernels are compiled.
type MemTraceOptions struct {
	// Kernel names the kernels as Attach does; "": every kernel.
	Kernel string
	// Spaces and Kinds select the accesses; empty Spaces: global only,
	// empty Kinds: every kind.
	Spaces []MemSpace
	Kinds  []MemKind
	// MaxRegisters caps each traced kernel's registers a thread. 0: the
	// most that keep the kernel's untraced occupancy; MaxRegistersAny: no
	// cap.
	MaxRegisters uint32
	// RuntimeMaxRegisters is the device runtime's registers when
	// ModuleLoad compiles it apart from the kernels. 0: 32; negative: one
	// module.
	RuntimeMaxRegisters int32
}

// MemTrace makes every module the context instruments from now on record
// the accesses @opts selects (nil: every global access of every kernel) in
// @ring, a ring map of an object of this context that stays open: the
// splicer's trace mode, without a probe program (docs/events.md, "The
// splicer's trace mode"). The ring's records are spans (DecodeSpan).
func (c *Context) MemTrace(ring *Map, opts *MemTraceOptions) error {
	defer c.lock()()
	if err := c.live(); err != nil {
		return err
	}
	if err := ring.obj.live(); err != nil {
		return err
	}
	if opts == nil {
		opts = &MemTraceOptions{}
	}
	masks := AttachOptions{Spaces: opts.Spaces, Kinds: opts.Kinds}
	spaces, kinds, err := masks.masks()
	if err != nil {
		return err
	}
	_, err = call(func() int {
		return capi.Mem_trace_enable(c.h, ring.h, opts.Kernel, uint(spaces),
			uint(kinds), uint(opts.MaxRegisters), int(opts.RuntimeMaxRegisters))
	})
	return err
}
