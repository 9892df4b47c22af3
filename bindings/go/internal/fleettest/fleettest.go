// SPDX-License-Identifier: MIT

// Package fleettest is the metrics tests' fixture in Go: the maps of
// tests/export/fleet.bpf.c (EGPU_TEST_FLEET) filled by runs on the CPU
// with the launches of tests/export/fleet_fixture.c, which lists the
// values every check expects.
package fleettest

import (
	"encoding/binary"
	"os"
	"testing"

	"libegpu.dev/egpu"
)

// Kernels names kernel ids 0-3; id 4 stays unnamed ("kernel_4").
var Kernels = map[uint32]string{0: "vec_add", 1: "matmul<float>", 2: `odd"k\`, 3: "tiny"}

// plan: kernel id, launches, nanoseconds each; 256 threads per launch.
var plan = []struct{ kernel, launches, ns uint32 }{
	{0, 5, 100}, {1, 3, 3000}, {2, 2, 1}, {3, 1, 20}, {4, 1, 5},
}

// Open loads the fixture into a new context (closed when @t ends) and
// runs its launches.
func Open(t testing.TB) (*egpu.Context, *egpu.Obj) {
	t.Helper()
	path := os.Getenv("EGPU_TEST_FLEET")
	if path == "" {
		t.Fatal("EGPU_TEST_FLEET is not set (ctest sets it)")
	}
	ctx, err := egpu.NewContext(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctx.Close)
	obj, err := ctx.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := obj.Program("launch")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range plan {
		for n := uint32(0); n < l.launches; n++ {
			in := binary.LittleEndian.AppendUint32(nil, l.kernel)
			in = binary.LittleEndian.AppendUint32(in, l.ns)
			in = binary.LittleEndian.AppendUint32(in, 256)
			if _, err := prog.Run(in, egpu.CPU); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ctx, obj
}
