// SPDX-License-Identifier: MIT

package egpu

import (
	"fmt"
	"strings"

	"libegpu.dev/egpu/internal/capi"
)

// MemSpace is the state space of a memory access (EGPU_SPACE_* of
// <egpu/ctx.h>), as memory probes see it in ctx->space.
type MemSpace uint16

const (
	SpaceGeneric = MemSpace(capi.EGPU_SPACE_GENERIC)
	SpaceGlobal  = MemSpace(capi.EGPU_SPACE_GLOBAL)
	SpaceShared  = MemSpace(capi.EGPU_SPACE_SHARED) // .shared::cta and ::cluster too
	SpaceLocal   = MemSpace(capi.EGPU_SPACE_LOCAL)
	SpaceConst   = MemSpace(capi.EGPU_SPACE_CONST)
	SpaceParam   = MemSpace(capi.EGPU_SPACE_PARAM)
)

// MemKind is the kind of a memory access (EGPU_MEM_* of <egpu/ctx.h>),
// as memory probes see it in ctx->kind.
type MemKind uint16

const (
	MemLoad   = MemKind(capi.EGPU_MEM_LOAD)   // ld, ldu, ld.global.nc
	MemStore  = MemKind(capi.EGPU_MEM_STORE)  // st
	MemAtomic = MemKind(capi.EGPU_MEM_ATOMIC) // atom, red
	MemAsync  = MemKind(capi.EGPU_MEM_ASYNC)  // cp.async, cp.async.bulk
)

// MemKernelShared is MemSite.KernelID of an access in a .func that
// several kernels call.
const MemKernelShared = uint32(capi.EGPU_MEM_KERNEL_SHARED)

// The names of the values, as the Python binding takes them; "": none.
var (
	spaceNames = nameTable(map[MemSpace]string{SpaceGeneric: "generic",
		SpaceGlobal: "global", SpaceShared: "shared", SpaceLocal: "local",
		SpaceConst: "const", SpaceParam: "param"})
	kindNames = nameTable(map[MemKind]string{MemLoad: "load",
		MemStore: "store", MemAtomic: "atomic", MemAsync: "async"})
)

func nameTable[T ~uint16](names map[T]string) []string {
	n := 0
	for v := range names {
		if int(v) >= n {
			n = int(v) + 1
		}
	}
	table := make([]string, n)
	for v, name := range names {
		table[v] = name
	}
	return table
}

func nameOf(table []string, v uint16, typ string) string {
	if int(v) < len(table) && table[v] != "" {
		return table[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}

func (s MemSpace) String() string { return nameOf(spaceNames, uint16(s), "MemSpace") }
func (k MemKind) String() string  { return nameOf(kindNames, uint16(k), "MemKind") }

// AttachOptions choose what a memory probe (Mem) runs before: accesses of
// the state spaces in Spaces and the kinds in Kinds; an empty list
// selects every one. With Strict, a kernel pattern that matches no kernel
// of a module fails its instrumentation instead of being a warning in
// Report.Warnings.
type AttachOptions struct {
	Spaces []MemSpace
	Kinds  []MemKind
	Strict bool
}

// maskOf is the mask (bit 1 << v) of @values, for egpu_attach_opts; an
// EINVAL error names a value that is not one of @table's.
func maskOf[T ~uint16](values []T, table []string, what string) (uint32, error) {
	var mask uint32
	for _, v := range values {
		if int(v) >= len(table) || table[v] == "" {
			var known []string
			for _, name := range table {
				if name != "" {
					known = append(known, name)
				}
			}
			return 0, newError(EINVAL, fmt.Sprintf("egpu: %s %d is not one of %s",
				what, v, strings.Join(known, ", ")))
		}
		mask |= 1 << v
	}
	return mask, nil
}

// masks are the egpu_attach_opts masks of @o (nil: 0, every one).
func (o *AttachOptions) masks() (spaces, kinds uint32, err error) {
	if o == nil {
		return 0, 0, nil
	}
	if spaces, err = maskOf(o.Spaces, spaceNames, "memory space"); err != nil {
		return 0, 0, err
	}
	kinds, err = maskOf(o.Kinds, kindNames, "memory access kind")
	return spaces, kinds, err
}

// MemSite is a memory instruction that memory probes run before; its
// index in Report.MemSites is the probes' ctx->site.
type MemSite struct {
	Site     uint32
	KernelID uint32 // as the probes' ctx->kernel_id; MemKernelShared for a shared .func
	Function string // the .entry or .func holding it
	Text     string // the instruction, as in the PTX
	PTXLine  uint32 // its line in the input PTX (1-based)
	Line     uint32 // source line from .loc, 0 without one
	File     string // source file from .file, "" without one
	Size     uint32 // bytes accessed, 0 if only known at run time
	Kind     MemKind
	Space    MemSpace
}

func memSiteOf(s capi.Egpu_mem_site) MemSite {
	return MemSite{
		Site:     uint32(s.GetSite()),
		KernelID: uint32(s.GetKernel_id()),
		Function: s.GetFunction(),
		Text:     s.GetText(),
		PTXLine:  uint32(s.GetPtx_line()),
		Line:     uint32(s.GetLine()),
		File:     s.GetFile(),
		Size:     uint32(s.GetSize()),
		Kind:     MemKind(s.GetKind()),
		Space:    MemSpace(s.GetSpace()),
	}
}
