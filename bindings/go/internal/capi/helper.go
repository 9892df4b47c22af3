// SPDX-License-Identifier: MIT

package capi

// #include <stdint.h>
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// HelperFunc receives a user helper call's arguments as 64-bit words
// (buffers as their C addresses, valid during the call only) and returns
// its result.
type HelperFunc func(args []uint64) uint64

// NewHelper gives fn a handle for Helper_register; C keeps the handle (an
// integer), never a Go pointer. Release it once the context is freed.
func NewHelper(fn HelperFunc) uintptr { return uintptr(cgo.NewHandle(fn)) }

// ReleaseHelper frees a handle of NewHelper.
func ReleaseHelper(h uintptr) { cgo.Handle(h).Delete() }

// egpuGoHelperCall is every Go helper's body: the C side (go_helper_body in
// capi.swig) calls it from libffi's closure, on the thread that runs the
// program (CPU back end) or makes the GPU's calls (dispatcher, poll).
//
//export egpuGoHelperCall
func egpuGoHelperCall(handle C.uintptr_t, args *C.uint64_t, nargs C.uint32_t) C.uint64_t {
	fn := cgo.Handle(handle).Value().(HelperFunc)
	return C.uint64_t(fn(unsafe.Slice((*uint64)(unsafe.Pointer(args)), int(nargs))))
}
