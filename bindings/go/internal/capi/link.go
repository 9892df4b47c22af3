// SPDX-License-Identifier: MIT

// Package capi is the SWIG-generated layer (capi.swig) under package egpu.
// It finds libegpu with pkg-config: set PKG_CONFIG_PATH to the directory
// of egpu.pc when it is not installed where pkg-config looks.
package capi

// #cgo pkg-config: egpu
import "C"
