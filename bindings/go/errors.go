// SPDX-License-Identifier: MIT

package egpu

import (
	"runtime"

	"libegpu.dev/egpu/internal/capi"
)

// Errno is one of the library's negative EGPU_E* codes.
// errors.Is(err, egpu.ENOENT) tells an error's code.
type Errno int

// The library's error codes (include/egpu.h).
const (
	EINVAL   Errno = -1  // invalid argument
	ENOMEM   Errno = -2  // out of memory
	EIO      Errno = -3  // a file could not be read or written
	EFORMAT  Errno = -4  // malformed input: ELF, instructions, PTX
	EVERIFY  Errno = -5  // a program was refused as unsafe
	EJIT     Errno = -6  // translation to PTX or host code failed
	ENODEV   Errno = -7  // no CUDA driver or no GPU
	ENOENT   Errno = -8  // no such program, map, kernel or key
	E2BIG    Errno = -9  // a map or buffer is full or too small
	ECUDA    Errno = -10 // the CUDA driver returned an error
	ENOTSUP  Errno = -11 // valid, but not supported by this build
	EEXIST   Errno = -12 // the key exists and NoExist was asked
	EBUSY    Errno = -13 // in use, or the GPU did not answer in time
	EUNKNOWN Errno = 0   // the C call reported no code (a NULL handle)
)

func (e Errno) Error() string {
	if e == EUNKNOWN {
		return "failed"
	}
	return capi.Egpu_strerror(int(e))
}

// Error is a libegpu failure: the code and the library's message, which
// names what failed and where.
type Error struct {
	Code Errno
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap gives the code, so errors.Is(err, egpu.ENOENT) works.
func (e *Error) Unwrap() error { return e.Code }

func newError(code Errno, msg string) *Error {
	if msg == "" {
		msg = code.Error()
	}
	return &Error{Code: code, Msg: msg}
}

// call runs a C call returning a status or a count and turns a negative
// one into an *Error. The message is thread-local in C: the goroutine
// stays on its thread from the call until the message is read.
func call(f func() int) (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rc := f()
	if rc < 0 {
		return rc, newError(Errno(rc), capi.Egpu_errmsg())
	}
	return rc, nil
}

// handle runs a C call returning a handle; a NULL one becomes an *Error
// with the library's code for it (egpu_errcode), or @code if it gave none.
func handle[T interface{ Swigcptr() uintptr }](code Errno, f func() T) (T, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h := f()
	if h.Swigcptr() == 0 {
		if c := Errno(capi.Egpu_errcode()); c != 0 {
			code = c
		}
		return h, newError(code, capi.Egpu_errmsg())
	}
	return h, nil
}
