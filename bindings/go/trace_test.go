// SPDX-License-Identifier: MIT

package egpu_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"libegpu.dev/egpu"
	"libegpu.dev/egpu/internal/tracetest"
)

// The stand-in GPU runs every kernel for 2 µs (fake_cupti.c).
const fakeKernelTime = 2 * time.Microsecond

const (
	tracedGoroutines = 4
	launchesEach     = 25
	backwards        = 10
	graphs           = 3
	graphKernels     = 4
)

// playProgram launches forward from several goroutines, backward and a
// graph from this one, and makes a copy and a set.
func playProgram() {
	var wg sync.WaitGroup
	for g := 0; g < tracedGoroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < launchesEach; i++ {
				tracetest.Launch("_Z7forwardPf", true)
			}
		}()
	}
	for i := 0; i < backwards; i++ {
		tracetest.Launch("_Z8backwardPf", false)
	}
	for i := 0; i < graphs; i++ {
		tracetest.GraphLaunch("_Z5layerv", graphKernels)
	}
	tracetest.CopyAndSet()
	wg.Wait()
}

func startTrace(t *testing.T, opts *egpu.TraceOptions) *egpu.Trace {
	t.Helper()
	tr, err := egpu.StartTrace(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	return tr
}

func wantErr(t *testing.T, what string, err error, code egpu.Errno) {
	t.Helper()
	if !errors.Is(err, code) {
		t.Fatalf("%s: %v, want %v", what, err, code)
	}
}

// A trace of the stand-in's launches: its totals, its own cost, its
// kernels by name and path, and what it refuses while running.
func TestTraceLaunches(t *testing.T) {
	tracetest.Open(t)
	tr := startTrace(t, &egpu.TraceOptions{MaxFrames: 32})
	_, err := egpu.StartTrace(nil)
	wantErr(t, "a second trace", err, egpu.EBUSY)
	_, err = tr.Stats()
	wantErr(t, "Stats while running", err, egpu.EINVAL)
	_, err = tr.Kernels()
	wantErr(t, "Kernels while running", err, egpu.EINVAL)
	wantErr(t, "Write while running", tr.Write(filepath.Join(t.TempDir(), "t.folded")), egpu.EINVAL)

	playProgram()
	if err := tr.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := tr.Stop(); err != nil {
		t.Fatalf("a second Stop: %v", err)
	}
	st, err := tr.Stats()
	if err != nil {
		t.Fatal(err)
	}
	launches := uint64(tracedGoroutines*launchesEach + backwards + graphs)
	kernels := uint64(tracedGoroutines*launchesEach + backwards + graphs*graphKernels)
	if st.Launches != launches || st.Kernels != kernels || st.Matched != kernels ||
		st.Copies != 2 || st.Lost != 0 || st.Devices != 1 ||
		st.GPUTime != time.Duration(kernels)*fakeKernelTime {
		t.Fatalf("stats %+v: want %d launches, %d kernels all matched, 2 copies", st, launches, kernels)
	}
	// its own cost: a stack per launch and copy call, timed
	if st.Stacks != st.Launches+st.Copies || st.StacksSlow+st.StacksReused > st.Stacks ||
		(st.StacksSlow == 0) != (st.SlowFrame == "") ||
		st.HostTime <= 0 || st.HostTime < st.StackTime+st.PythonTime {
		t.Fatalf("own cost %+v", st)
	}
	t.Logf("own cost: %v in callbacks (%v stacks, %v Python), %d stacks, %d slow (%q), %d reused",
		st.HostTime, st.StackTime, st.PythonTime, st.Stacks, st.StacksSlow, st.SlowFrame, st.StacksReused)

	ks, err := tr.Kernels()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name     string
		launches uint64
		api      string
	}{ // most GPU time first
		{"forward(float*)", tracedGoroutines * launchesEach, "cudaLaunchKernel"},
		{"layer()", graphs * graphKernels, "cudaGraphLaunch"},
		{"backward(float*)", backwards, "cudaLaunchKernel"},
	}
	if len(ks) != len(want) {
		t.Fatalf("kernels %+v", ks)
	}
	for i, w := range want {
		k := ks[i]
		if k.Name != w.name || k.Launches != w.launches ||
			k.GPUTime != time.Duration(w.launches)*fakeKernelTime ||
			!(k.HottestPath == w.api || strings.HasSuffix(k.HottestPath, ";"+w.api)) ||
			k.HottestTime != k.GPUTime {
			t.Errorf("kernel %d: %+v, want %s launched %d times through %s", i, k, w.name, w.launches, w.api)
		}
	}
	t.Logf("hottest path of forward(float*): %s", ks[0].HottestPath)
}

// A streamed trace: its timeline written while it ran, the same totals
// as a held one, and the formats that need its events refused.
func TestTraceStream(t *testing.T) {
	tracetest.Open(t)
	dir := t.TempDir()
	stream := filepath.Join(dir, "t.perfetto-trace")
	_, err := egpu.StartTrace(&egpu.TraceOptions{MaxSize: 1 << 20})
	wantErr(t, "MaxSize without Stream", err, egpu.EINVAL)
	_, err = egpu.StartTrace(&egpu.TraceOptions{Stream: stream, Last: time.Second})
	wantErr(t, "Stream with Last", err, egpu.EINVAL)
	_, err = egpu.StartTrace(&egpu.TraceOptions{Stream: stream, MaxSize: 1000})
	wantErr(t, "a MaxSize under 64 KiB", err, egpu.EINVAL)

	tr := startTrace(t, &egpu.TraceOptions{Stream: stream, MaxSize: 1 << 20, Rotate: 2})
	busy := filepath.Join(dir, "busy.perfetto-trace")
	_, err = egpu.StartTrace(&egpu.TraceOptions{Stream: busy})
	wantErr(t, "a second streamed trace", err, egpu.EBUSY)
	if _, err := os.Stat(busy); !os.IsNotExist(err) {
		t.Errorf("a refused start left %s: %v", busy, err)
	}
	playProgram()
	if err := tr.Stop(); err != nil {
		t.Fatal(err)
	}
	st, err := tr.Stats()
	launches := uint64(tracedGoroutines*launchesEach + backwards + graphs)
	kernels := uint64(tracedGoroutines*launchesEach + backwards + graphs*graphKernels)
	if err != nil || st.Launches != launches || st.Kernels != kernels || st.Matched != kernels ||
		st.Copies != 2 || st.GPUTime != time.Duration(kernels)*fakeKernelTime || st.StreamFull {
		t.Fatalf("stats %+v, %v: want %d launches, %d kernels all matched", st, err, launches, kernels)
	}
	b, err := os.ReadFile(stream)
	if err != nil || b[0] != 0x0a || !bytes.Contains(b, []byte("forward(float*)")) {
		t.Fatalf("streamed %s: %v (%d bytes)", stream, err, len(b))
	}
	if err := tr.Write(stream); err != nil {
		t.Fatalf("writing the streamed file again: %v", err)
	}
	wantErr(t, "another Perfetto file", tr.Write(filepath.Join(dir, "u.perfetto-trace")), egpu.EINVAL)
	wantErr(t, "a JSON timeline", tr.Write(filepath.Join(dir, "t.json")), egpu.EINVAL)
	if err := tr.Write(filepath.Join(dir, "t.folded")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "t.folded")); !bytes.Contains(b, []byte("[GPU_Kernel]layer()")) {
		t.Errorf("folded totals:\n%s", b)
	}
}

// Write picks the format from the suffix; every format holds the kernels.
func TestTraceWrite(t *testing.T) {
	tracetest.Open(t)
	tr := startTrace(t, nil)
	playProgram()
	if err := tr.Stop(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gzipMagic := []byte{0x1f, 0x8b}
	for _, f := range []struct {
		name  string
		check func([]byte) bool
	}{
		{"t.folded", func(b []byte) bool {
			return bytes.Contains(b, []byte(";cudaLaunchKernel;[GPU_Kernel]forward(float*) ")) &&
				bytes.Contains(b, []byte(";cudaMemcpy;"))
		}},
		{"t.json", func(b []byte) bool { return b[0] == '{' && bytes.Contains(b, []byte("forward(float*)")) }},
		{"t.perfetto-trace", func(b []byte) bool {
			return b[0] == 0x0a && bytes.Contains(b, []byte("forward(float*)"))
		}},
		{"t.svg", func(b []byte) bool {
			return bytes.Contains(b, []byte("<svg")) && bytes.Contains(b, []byte("forward(float*)"))
		}},
		{"t.txt", func(b []byte) bool { return bytes.Contains(b, []byte("forward(float*)")) }},
		{"gpu.pb.gz", func(b []byte) bool { return bytes.HasPrefix(b, gzipMagic) }},
		{"gpu.pprof", func(b []byte) bool { return bytes.HasPrefix(b, gzipMagic) }},
	} {
		path := filepath.Join(dir, f.name)
		if err := tr.Write(path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 || !f.check(b) {
			t.Errorf("%s: unexpected content (%d bytes):\n%.400s", f.name, len(b), b)
		}
	}
	path := filepath.Join(dir, "folded.out")
	if err := tr.WriteFormat(path, egpu.TraceFolded); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte("[GPU_Kernel]layer()")) {
		t.Errorf("WriteFormat folded:\n%s", b)
	}
	if err := tr.WritePprof(filepath.Join(dir, "nocopies.pb.gz"), true); err != nil {
		t.Fatal(err)
	}
	text, err := tr.Summary()
	if err != nil || !strings.Contains(text, "forward(float*)") {
		t.Fatalf("summary: %v\n%s", err, text)
	}
	wantErr(t, "an unknown suffix", tr.Write(filepath.Join(dir, "t.bin")), egpu.EINVAL)
	wantErr(t, "an unknown format", tr.WriteFormat(path, egpu.TraceFormat(99)), egpu.EINVAL)
	wantErr(t, "a missing directory", tr.Write(filepath.Join(dir, "none", "t.svg")), egpu.EIO)
}

// Options reach the library, which checks them; a closed trace refuses
// everything and lets the next one start.
func TestTraceOptionsAndClose(t *testing.T) {
	tracetest.Open(t)
	_, err := egpu.StartTrace(&egpu.TraceOptions{MaxFrames: 1 << 20})
	wantErr(t, "MaxFrames out of range", err, egpu.EINVAL)
	_, err = egpu.StartTrace(&egpu.TraceOptions{BufferSize: 1000})
	wantErr(t, "a small buffer", err, egpu.EINVAL)
	_, err = egpu.StartTrace(&egpu.TraceOptions{Last: -time.Second})
	wantErr(t, "a negative Last", err, egpu.EINVAL)

	tr := startTrace(t, &egpu.TraceOptions{NoCopies: true, MaxFrames: 2, BufferSize: 64 << 10, NoPython: true,
		Last: time.Hour})
	tracetest.Launch("_Z8backwardPf", false)
	tracetest.CopyAndSet()
	if err := tr.Stop(); err != nil {
		t.Fatal(err)
	}
	st, err := tr.Stats()
	if err != nil || st.Copies != 0 || st.Kernels != 1 || st.Matched != 1 {
		t.Fatalf("stats without copies: %+v, %v", st, err)
	}
	tr.Close()
	tr.Close()
	wantErr(t, "Stop after Close", tr.Stop(), egpu.EINVAL)
	_, err = tr.Stats()
	wantErr(t, "Stats after Close", err, egpu.EINVAL)
	wantErr(t, "Write after Close", tr.Write(filepath.Join(t.TempDir(), "t.svg")), egpu.EINVAL)

	next := startTrace(t, nil) // Close let it go (it stops a running trace too)
	next.Close()
}

// Without libcupti, starting fails with ENODEV and holds nothing. The
// library opens libcupti once per process, so this runs in a child with
// EGPU_CUPTI_LIB naming a missing file.
func TestTraceWithoutCUPTI(t *testing.T) {
	const child = "EGPU_TEST_TRACE_CHILD"
	if os.Getenv(child) != "" {
		for i := 0; i < 2; i++ {
			_, err := egpu.StartTrace(nil)
			wantErr(t, "a start without libcupti", err, egpu.ENODEV)
			if !strings.Contains(err.Error(), "EGPU_CUPTI_LIB") {
				t.Fatalf("the message does not say how to find libcupti: %v", err)
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTraceWithoutCUPTI$", "-test.v")
	cmd.Env = append(os.Environ(), child+"=1",
		"EGPU_CUPTI_LIB="+filepath.Join(t.TempDir(), "libcupti.so"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestTraceWithoutCUPTI") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
