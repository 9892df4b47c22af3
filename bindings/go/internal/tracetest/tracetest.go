// SPDX-License-Identifier: MIT

// Package tracetest plays a CUDA program for the trace tests without a
// GPU: it opens the stand-in libcupti of tests/tracecol (fake_cupti.c,
// EGPU_TEST_CUPTI), points libegpu at it (EGPU_CUPTI_LIB) and calls its
// fake_* functions, which make CUPTI's callbacks on the calling thread and
// queue the GPU's records for the trace's flush.
package tracetest

// #cgo LDFLAGS: -ldl
// #include <dlfcn.h>
// #include <stdbool.h>
// #include <stdlib.h>
//
// static void *fake;
// static void (*launch)(const char *kernel, bool split);
// static void (*graph_launch)(const char *kernel, int kernels);
// static void (*copy)(void);
// static void (*set)(void);
//
// /* dlopen @path (the handle libegpu gets too) and find the fake_*
//  * calls; NULL, or what failed. */
// static const char *fake_open(const char *path)
// {
// 	if (!(fake = dlopen(path, RTLD_NOW)))
// 		return dlerror();
// 	launch = (void (*)(const char *, bool))dlsym(fake, "fake_launch");
// 	graph_launch = (void (*)(const char *, int))dlsym(fake, "fake_graph_launch");
// 	copy = (void (*)(void))dlsym(fake, "fake_memcpy");
// 	set = (void (*)(void))dlsym(fake, "fake_memset");
// 	return launch && graph_launch && copy && set ? NULL :
// 	       "no fake_launch, fake_graph_launch, fake_memcpy or fake_memset";
// }
// static void fake_launch(const char *k, bool split) { launch(k, split); }
// static void fake_graph_launch(const char *k, int n) { graph_launch(k, n); }
// static void fake_copy_and_set(void) { copy(); set(); }
import "C"

import (
	"os"
	"sync"
	"testing"
)

var (
	opening sync.Once
	openErr string
	namesMu sync.Mutex
	names   = map[string]*C.char{} // kept for the process
)

// Open makes libegpu trace through the stand-in libcupti; it skips @t
// where EGPU_TEST_CUPTI does not name it (outside ctest, or a build
// without CUPTI's headers).
func Open(t testing.TB) {
	t.Helper()
	path := os.Getenv("EGPU_TEST_CUPTI")
	if path == "" {
		t.Skip("EGPU_TEST_CUPTI is not set: run the tests through ctest (a build with CUPTI's headers)")
	}
	opening.Do(func() {
		// libegpu reads it at its first trace, through the C environment
		os.Setenv("EGPU_CUPTI_LIB", path)
		cpath := C.CString(path)
		if why := C.fake_open(cpath); why != nil {
			openErr = path + ": " + C.GoString(why)
		}
	})
	if openErr != "" {
		t.Fatal(openErr)
	}
}

// cName is @name in C memory for the process's life: the fake keeps the
// pointer in its records until a trace's flush reads them.
func cName(name string) *C.char {
	namesMu.Lock()
	defer namesMu.Unlock()
	p, ok := names[name]
	if !ok {
		p = C.CString(name)
		names[name] = p
	}
	return p
}

// Launch is a cudaLaunchKernel of @kernel (a mangled name) from the
// calling thread; @split gives the driver's call its own correlation id.
func Launch(kernel string, split bool) { C.fake_launch(cName(kernel), C.bool(split)) }

// GraphLaunch is a cudaGraphLaunch whose graph runs @kernels of @kernel.
func GraphLaunch(kernel string, kernels int) { C.fake_graph_launch(cName(kernel), C.int(kernels)) }

// CopyAndSet is a cudaMemcpy then a cudaMemset.
func CopyAndSet() { C.fake_copy_and_set() }
