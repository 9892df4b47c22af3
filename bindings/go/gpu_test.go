// SPDX-License-Identifier: MIT

//go:build gpu

package egpu_test

import (
	"fmt"
	"os"
	"testing"

	"libegpu.dev/egpu"
)

// TestMain runs the GPU tests (go test -tags gpu -run GPU) only where a
// GPU is usable; elsewhere it prints the marker ctest reports as skipped.
func TestMain(m *testing.M) {
	if err := egpu.CheckGPU(); err != nil {
		fmt.Printf("egpu: no GPU, GPU tests skipped (%v)\n", err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestGPURunMatchesCPU(t *testing.T) {
	ctx, err := egpu.NewContext(&egpu.Options{ThreadSlots: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	obj, err := ctx.Load(testData(t, "EGPU_TEST_PROBES"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := obj.Program("add")
	mem := []byte{1, 4, 0}
	if r0, err := p.Run(mem, egpu.CPU); err != nil || r0 != 4 {
		t.Fatalf("CPU: %d, %v", r0, err)
	}
	mem[2] = 0
	if r0, err := p.Run(mem, egpu.GPU); err != nil || r0 != 8 || mem[2] != 7 {
		t.Fatalf("GPU: %d, %v, memory %v", r0, err, mem)
	}
	counts, _ := obj.Map("counts")
	if v, err := counts.LookupUint64(1); err != nil || v != 8 {
		t.Fatalf("counts[1] on the GPU: %d, %v", v, err)
	}
	per, _ := obj.Map("per_thread")
	if per.ValuesPerKey() != 1024 {
		t.Fatalf("per-thread slots %d", per.ValuesPerKey())
	}
}
