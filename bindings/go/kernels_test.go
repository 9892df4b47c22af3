// SPDX-License-Identifier: MIT

package egpu_test

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"libegpu.dev/egpu"
)

// Kernel ids are per context: unique across modules, the same for the
// same module text, and a map keyed by them reads per kernel name.
func TestKernelIdentity(t *testing.T) {
	ctx, obj := load(t)
	raw, err := os.ReadFile(testData(t, "EGPU_TEST_PTX"))
	if err != nil {
		t.Fatal(err)
	}
	_, first, err := ctx.Instrument(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	_, again, _ := ctx.Instrument(string(raw))
	_, other, err := ctx.Instrument(string(raw) + "// another text\n")
	if err != nil {
		t.Fatal(err)
	}
	if first.Kernels[1].KernelID != 1 || again.Kernels[1].KernelID != 1 ||
		other.Kernels[0].KernelID != 2 || other.Kernels[1].KernelID != 3 {
		t.Fatalf("ids %+v / %+v / %+v", first.Kernels, again.Kernels, other.Kernels)
	}
	ks, err := ctx.Kernels()
	if err != nil || len(ks) != 4 || ks[2].Name != first.Kernels[0].Name || ks[2].Module != 1 {
		t.Fatalf("Kernels: %+v, %v", ks, err)
	}
	if _, err := ctx.Kernel(4); !errors.Is(err, egpu.ENOENT) {
		t.Fatalf("Kernel(4): %v", err)
	}
	m, _ := obj.Map("counts")
	for id, v := range map[uint32]uint64{0: 5, 2: 7, 1: 1} {
		if err := m.UpdateUint64(id, v, egpu.Any); err != nil {
			t.Fatal(err)
		}
	}
	by, err := m.ByKernel()
	if err != nil {
		t.Fatal(err)
	}
	if len(by) != 2 || binary.LittleEndian.Uint64(by[first.Kernels[0].Demangled]) != 12 ||
		binary.LittleEndian.Uint64(by[first.Kernels[1].Demangled]) != 1 {
		t.Fatalf("ByKernel: %v", by)
	}
}
