// SPDX-License-Identifier: MIT

package main

// #cgo CFLAGS: -I/usr/local/cuda/include
// #cgo LDFLAGS: -ldl
// #include <stdlib.h>
// #include "cudashim.h"
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// cudaError is a failed driver call.
type cudaError struct {
	what string
	res  C.CUresult
}

func (e *cudaError) Error() string {
	return fmt.Sprintf("%s: %s (CUresult %d)", e.what, C.GoString(C.ks_strerror(e.res)), int(e.res))
}

func check(what string, res C.CUresult) error {
	if res == C.CUDA_SUCCESS {
		return nil
	}
	return &cudaError{what, res}
}

// openCUDA opens the driver and makes device 0's primary context current
// on the calling OS thread: the one thread that launches (see main's init).
func openCUDA() error {
	var why [256]C.char
	if C.ks_open(&why[0], C.size_t(len(why))) != 0 {
		return errors.New(C.GoString(&why[0]))
	}
	return check("primary context of device 0", C.ks_ctx_start())
}

func closeCUDA() { C.ks_ctx_stop() }

// kernel is a function of the loaded module, launched as f(x, n).
type kernel struct {
	fn C.CUfunction
}

func lookupKernel(module uintptr, name string) (kernel, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var k kernel
	err := check("cuModuleGetFunction "+name, C.ks_function(C.uintptr_t(module), cname, &k.fn))
	return k, err
}

// deviceFloats is a zeroed array of floats in GPU memory.
type deviceFloats struct {
	ptr C.CUdeviceptr
	n   int
}

func allocFloats(n int) (deviceFloats, error) {
	d := deviceFloats{n: n}
	return d, check("cuMemAlloc", C.ks_alloc_floats(&d.ptr, C.size_t(n)))
}

func (d deviceFloats) free() { C.ks_free(d.ptr) }

// launch queues k(x, x.n) on the default stream.
func (k kernel) launch(grid, block int, x deviceFloats) error {
	return check("cuLaunchKernel", C.ks_launch(k.fn, C.uint(grid), C.uint(block), x.ptr, C.int(x.n)))
}

func synchronize() error { return check("cuCtxSynchronize", C.ks_synchronize()) }
