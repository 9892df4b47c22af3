// SPDX-License-Identifier: MIT

package egpu_test

import (
	"runtime"
	"sync"
	"testing"

	"libegpu.dev/egpu"
)

// Goroutines sharing one context: map updates and lookups, verification,
// translation and program runs interleave under the context's lock (run
// with -race to see the Go side; the C side would corrupt the hash map's
// host copy without it).
func TestContextSharedByGoroutines(t *testing.T) {
	_, obj := load(t)
	counts := mustMap(t, obj, "counts")
	slots := mustMap(t, obj, "slots")
	add, err := obj.Program("add")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			key := uint32(g % 4)
			for i := 0; i < 200; i++ {
				if err := slots.UpdateUint64(key, uint64(i), egpu.Any); err != nil {
					t.Error(err)
					return
				}
				if _, err := slots.LookupUint64(key); err != nil {
					t.Error(err)
					return
				}
				if i%50 == 0 {
					if v, err := add.Verify(&egpu.VerifyOptions{CtxLen: 8}); err != nil || !v.Accepted {
						t.Errorf("verify: %+v %v", v, err)
						return
					}
					if _, err := add.Run([]byte{byte(g % 8), 1, 0, 0, 0, 0, 0, 0}, egpu.CPU); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	var total uint64
	for k := uint32(0); k < 8; k++ {
		v, err := counts.LookupUint64(k)
		if err == nil {
			total += v
		}
	}
	if total != 8*4 { // 8 goroutines, 4 runs each, +1 per run
		t.Fatalf("counts sum to %d, want 32", total)
	}
}

// A context nobody closed is freed by its finalizer, objects and all; a
// closed one is not freed twice.
func TestForgottenContextIsFreed(t *testing.T) {
	for i := 0; i < 20; i++ {
		ctx, err := egpu.NewContext(&egpu.Options{Offline: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ctx.Load(testData(t, "EGPU_TEST_PROBES")); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			ctx.Close()
		}
	}
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
}
