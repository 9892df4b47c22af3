// SPDX-License-Identifier: MIT

//go:build gpu

package egpu_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"libegpu.dev/egpu"
	"libegpu.dev/egpu/internal/cudatest"
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
	_, obj := loadIn(t, &egpu.Options{ThreadSlots: 1024}, "EGPU_TEST_PROBES")
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

// TestGPUMemProbeCounts runs add_one (../python/tests/kernels.cu) with the
// counting memory probe on its global accesses: one load and one store
// per thread with i < n, and nothing counted for the spaces left out.
// startCUDA makes device 0's primary context current on the test's OS
// thread, which the test keeps until it ends (its cleanups included).
func startCUDA(t *testing.T) {
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	if err := cudatest.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cudatest.Stop) // registered before the context's: runs after it is closed
}

// loadKernels loads the kernels of EGPU_TEST_PTX through @ctx (so
// instrumented with what is attached) and returns the CUmodule.
func loadKernels(t *testing.T, ctx *egpu.Context) uintptr {
	t.Helper()
	ptx, err := os.ReadFile(testData(t, "EGPU_TEST_PTX"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := ctx.ModuleLoad(string(ptx))
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

func TestGPUMemProbeCounts(t *testing.T) {
	startCUDA(t)
	ctx, obj := loadIn(t, nil, "EGPU_TEST_MEM")
	p, _ := obj.Program("count_mem")
	opts := &egpu.AttachOptions{Spaces: []egpu.MemSpace{egpu.SpaceGlobal}}
	if _, err := p.AttachWith("add_one", egpu.Mem, opts); err != nil {
		t.Fatal(err)
	}
	mod := loadKernels(t, ctx)
	const grid, block = 4, 256
	n := grid*block - 24
	if err := cudatest.Launch(mod, "add_one", grid, block, n); err != nil {
		t.Fatal(err)
	}
	counts, _ := obj.Map("mem_counts")
	count := func(k egpu.MemKind, s egpu.MemSpace) uint64 {
		v, err := counts.LookupUint64(uint32(k)*8 + uint32(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	loads, stores := count(egpu.MemLoad, egpu.SpaceGlobal), count(egpu.MemStore, egpu.SpaceGlobal)
	if loads != uint64(n) || stores != uint64(n) || count(egpu.MemLoad, egpu.SpaceParam) != 0 {
		t.Fatalf("%d global loads and %d stores for %d threads, %d param loads",
			loads, stores, n, count(egpu.MemLoad, egpu.SpaceParam))
	}
}

func TestGPUClock(t *testing.T) {
	ctx, _ := loadIn(t, nil, "EGPU_TEST_PROBES")
	k, err := ctx.ClockSync()
	if err != nil {
		t.Fatal(err)
	}
	if k.ErrorNs >= 10000 || k.Rounds == 0 || k.RoundTripNs == 0 || k.StepNs == 0 || k.HostNs == 0 {
		t.Fatalf("calibration %+v", k)
	}
	if h := k.GPUToHost(k.HostNs + uint64(k.OffsetNs)); h != k.HostNs {
		t.Fatalf("GPUToHost of the measurement: %d, want %d", h, k.HostNs)
	}
	if last, err := ctx.Clock(); err != nil || last != k {
		t.Fatalf("Clock: %+v, %v; want %+v", last, err, k)
	}
	t.Logf("clock: offset %d ns, error %d ns, round trip %d ns, step %d ns, %d rounds",
		k.OffsetNs, k.ErrorNs, k.RoundTripNs, k.StepNs, k.Rounds)
}

// TestGPUHelpersInOrder: Go funcs called for entry probes of ordered
// (../../tests/helpers/gpu_helpers.bpf.c), on the dispatcher thread and
// in HelperPoll: each call once, each thread's in order.
func TestGPUHelpersInOrder(t *testing.T) {
	for _, thread := range []bool{true, false} {
		t.Run(fmt.Sprint("dispatcher=", thread), func(t *testing.T) { gpuHelpers(t, thread) })
	}
}

func gpuHelpers(t *testing.T, thread bool) {
	startCUDA(t)
	const grid, block = 16, 256
	var mu sync.Mutex // the dispatcher and HelperPoll take turns, but -race wants it
	next := make([]uint64, grid*block)
	calls, wrong := 0, 0
	seq := func(th, k uint64) uint64 {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if next[th] != k {
			wrong++
		}
		next[th] = k + 1
		return 0
	}
	buf := func(b [16]byte) uint64 {
		mu.Lock()
		defer mu.Unlock()
		th, inv := binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])
		calls++
		if inv != ^th || next[th] != 2 {
			wrong++
		}
		return 0
	}
	other := func(uint64) uint64 { return 0 }
	ctx, err := egpu.NewContext(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctx.Close)
	for i, fn := range []any{seq, buf, other, other} {
		if err := ctx.RegisterHelper(egpu.HelperUserMin+uint32(i), fmt.Sprint("h", i), fn, ""); err != nil {
			t.Fatal(err)
		}
	}
	obj, err := ctx.Load(testData(t, "EGPU_TEST_GPU_UHELPERS"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obj.AttachAll(); err != nil {
		t.Fatal(err)
	}
	if err := ctx.HelperDispatch(thread); err != nil {
		t.Fatal(err)
	}
	ptx, err := os.ReadFile(testData(t, "EGPU_TEST_HELPER_PTX"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := ctx.ModuleLoad(string(ptx))
	if err != nil {
		t.Fatal(err)
	}
	if err := cudatest.Launch(mod, "ordered", grid, block, 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		mu.Lock()
		done := calls >= 4*grid*block
		mu.Unlock()
		if done {
			break
		}
		if _, err := ctx.HelperPoll(10); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 4*grid*block || wrong != 0 || ctx.HelperDrops() != 0 {
		t.Fatalf("%d calls (want %d), %d out of order, %d dropped", calls,
			4*grid*block, wrong, ctx.HelperDrops())
	}
}

// TestGPUTrace: launches through the CUDA driver, traced by the machine's
// libcupti: the kernel by name, every execution joined to its launch,
// with GPU time.
func TestGPUTrace(t *testing.T) {
	startCUDA(t)
	ctx, err := egpu.NewContext(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctx.Close)
	mod := loadKernels(t, ctx)
	tr, err := egpu.StartTrace(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	const launches = 3
	for i := 0; i < launches; i++ {
		if err := cudatest.Launch(mod, "add_one", 4, 256, 1000); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Stop(); err != nil {
		t.Fatal(err)
	}
	st, err := tr.Stats()
	if err != nil || st.Launches < launches || st.Kernels < launches || st.Matched != st.Kernels ||
		st.GPUTime <= 0 || st.Devices != 1 {
		t.Fatalf("stats %+v, %v", st, err)
	}
	ks, err := tr.Kernels()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		if k.Name == "add_one" {
			if k.Launches != launches || k.GPUTime <= 0 || !strings.Contains(k.HottestPath, "cuLaunchKernel") {
				t.Fatalf("add_one: %+v", k)
			}
			t.Logf("trace: %+v; add_one from %s", st, k.HottestPath)
			return
		}
	}
	t.Fatalf("no add_one in %+v", ks)
}
