// SPDX-License-Identifier: MIT

//go:build gpu

// Package cudatest launches kernels of a module that egpu's ModuleLoad
// loaded, for the GPU tests (build tag gpu). It drives the CUDA driver
// through examples/go-kernelstat's shim (dlopen'ed libcuda.so.1), so the
// two share one copy of those calls.
package cudatest

// #cgo CFLAGS: -I/usr/local/cuda/include -I${SRCDIR}/../../../../examples/go-kernelstat
// #cgo LDFLAGS: -ldl
// #include <stdlib.h>
// #include "cudashim.c"
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

func check(what string, res C.CUresult) error {
	if res == C.CUDA_SUCCESS {
		return nil
	}
	return fmt.Errorf("%s: %s (CUresult %d)", what, C.GoString(C.ks_strerror(res)), int(res))
}

// Start opens the driver and makes device 0's primary context current on
// the calling OS thread, which the caller keeps (runtime.LockOSThread)
// until Stop.
func Start() error {
	var why [256]C.char
	if C.ks_open(&why[0], C.size_t(len(why))) != 0 {
		return errors.New(C.GoString(&why[0]))
	}
	return check("primary context of device 0", C.ks_ctx_start())
}

// Stop releases the primary context.
func Stop() { C.ks_ctx_stop() }

// Launch runs kernel @name of @module as name(x, n) on grid*block threads,
// x being grid*block zeroed floats in GPU memory, and waits for it.
func Launch(module uintptr, name string, grid, block, n int) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var fn C.CUfunction
	if err := check("cuModuleGetFunction "+name, C.ks_function(C.uintptr_t(module), cname, &fn)); err != nil {
		return err
	}
	var x C.CUdeviceptr
	if err := check("cuMemAlloc", C.ks_alloc_floats(&x, C.size_t(grid*block))); err != nil {
		return err
	}
	defer C.ks_free(x)
	if err := check("cuLaunchKernel", C.ks_launch(fn, C.uint(grid), C.uint(block), x, C.int(n))); err != nil {
		return err
	}
	return check("cuCtxSynchronize", C.ks_synchronize())
}
