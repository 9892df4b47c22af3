// SPDX-License-Identifier: MIT

package egpu

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"libegpu.dev/egpu/internal/capi"
)

// TraceFormat is an output of Trace.WriteFormat (enum egpu_trace_format,
// and pprof).
type TraceFormat int

const (
	// TraceFolded: folded stacks weighted by GPU time in microseconds,
	// "main;f;cudaLaunchKernel;[GPU_Kernel]k 3099".
	TraceFolded TraceFormat = 1
	// TraceChrome: a Chrome trace / Perfetto JSON timeline with
	// launch -> kernel flows.
	TraceChrome TraceFormat = 2
	// TraceSVG: a self-contained interactive SVG flame graph.
	TraceSVG TraceFormat = 3
	// TraceSummary: a text table of the top kernels by GPU time, their
	// launches and hottest call paths.
	TraceSummary TraceFormat = 4
	// TracePerfetto: Perfetto's protobuf trace (.perfetto-trace), the
	// timeline of TraceChrome with names and call stacks interned.
	TracePerfetto TraceFormat = 5
	// TracePprof: a gzip'd pprof profile of GPU time and launches by CPU
	// stack (egpu_trace_write_pprof, docs/fleet.md). Not a value of the C
	// enum.
	TracePprof TraceFormat = 256
)

// traceSuffixes choose Trace.Write's format from the path's suffix (as
// Python's Trace.write does; "x.pb.gz" ends in ".gz").
var traceSuffixes = map[string]TraceFormat{
	".perfetto-trace": TracePerfetto, ".folded": TraceFolded,
	".json": TraceChrome, ".svg": TraceSVG, ".txt": TraceSummary,
	".gz": TracePprof, ".pprof": TracePprof,
}

// TraceOptions configure StartTrace; the zero value (or nil) gives the
// defaults.
type TraceOptions struct {
	MaxFrames  uint32 // host frames kept per launch; 0: 64
	NoCopies   bool   // do not record memcpy and memset
	BufferSize uint64 // bytes per CUPTI activity buffer; 0: 4 MiB
	// NoPython leaves out Python frames (by default a thread running
	// CPython 3.10+, in a program embedding it, gets its Python frames in
	// place of the interpreter's).
	NoPython bool
	// Last makes a flight recorder: the trace keeps only its last Last
	// (egpu trace --last); 0 keeps all of it.
	Last time.Duration
	// Stream names a file the Perfetto timeline is written to while the
	// trace runs, so its memory stays bounded whatever the run's length;
	// the trace then keeps totals (every format but TraceChrome). Not
	// with Last. "": the trace is held until written.
	Stream string
	// MaxSize bounds each file of Stream (bytes, at least 64 KiB): the
	// timeline stops there, or with Rotate rotates keeping Rotate files
	// (Stream the newest, then STEM.1.EXT, ...; egpu trace --max-size
	// --rotate). 0: no bound.
	MaxSize uint64
	Rotate  uint32
}

// TraceStats are the totals of a stopped trace.
type TraceStats struct {
	Launches uint64        // launch API calls seen (kernel and graph)
	Kernels  uint64        // kernel executions CUPTI reported
	Matched  uint64        // kernel executions joined to their launch's stack
	Copies   uint64        // memcpy and memset operations
	Lost     uint64        // activity records CUPTI dropped
	GPUTime  time.Duration // summed kernel durations
	Devices  uint32        // distinct devices that ran kernels
	// What tracing cost the application's threads (the tracer's
	// callbacks; docs/trace.md).
	HostTime     time.Duration // all of it
	StackTime    time.Duration // of which unwinding native stacks
	PythonTime   time.Duration // of which walking Python frames
	Stacks       uint64        // native stacks taken
	StacksSlow   uint64        // of which by backtrace(), a full DWARF unwind
	StacksReused uint64        // of which finished from the thread's previous stack
	SlowFrame    string        // the first frame sent to backtrace() (function, else "module+0xoffset"); "" if none
	StreamFull   bool          // the streamed timeline stopped at MaxSize
}

// TraceKernel is one kernel (by name) of a stopped trace: its executions,
// their GPU time, and the CPU call path with the most of it.
type TraceKernel struct {
	Name        string // demangled
	Launches    uint64 // executions
	GPUTime     time.Duration
	HottestPath string // "main;f;cudaLaunchKernel"; "" when no launch was joined
	HottestTime time.Duration
}

// Trace records every kernel launch, copy and set of the process, with
// the host call stack that made it, joined to the GPU's record of it
// (egpu_trace_*, docs/trace.md). It needs CUPTI and the CUDA driver, no
// probe and no Context.
//
//	tr, err := egpu.StartTrace(nil)
//	if err != nil { ... }
//	defer tr.Close()
//	runModel()
//	err = tr.Stop()         // waits for the GPU's work, joins
//	err = tr.Write("model.svg")
//
// Its methods are safe for concurrent use. A Trace nobody closed is
// freed when the garbage collector finds it unreachable, a safety net
// only: until then no other trace can start.
type Trace struct {
	mu      sync.Mutex
	h       capi.Struct_SS_egpu_trace
	stopped bool
}

// StartTrace starts tracing the process: launches from now on are
// recorded. One trace runs per process at a time: EBUSY while another (or
// another CUPTI tool) does; ENODEV without libcupti or a CUDA driver;
// EINVAL for options out of range.
func StartTrace(opts *TraceOptions) (*Trace, error) {
	if opts == nil {
		opts = &TraceOptions{}
	}
	if opts.Last < 0 {
		return nil, newError(EINVAL, "egpu: TraceOptions.Last must not be negative")
	}
	h, err := handle(EUNKNOWN, func() capi.Struct_SS_egpu_trace {
		return capi.Trace_start(uint(opts.MaxFrames), opts.NoCopies, opts.BufferSize, opts.NoPython, uint64(opts.Last),
			opts.Stream, opts.MaxSize, uint(opts.Rotate))
	})
	if err != nil {
		return nil, err
	}
	t := &Trace{h: h}
	runtime.SetFinalizer(t, (*Trace).Close)
	return t, nil
}

func (t *Trace) lock() func() {
	t.mu.Lock()
	return t.mu.Unlock
}

// live is called with the lock held.
func (t *Trace) live() error {
	if t.h == nil {
		return newError(EINVAL, "egpu: the trace is closed")
	}
	return nil
}

// done is live for a stopped trace, what its results need.
func (t *Trace) done() error {
	if err := t.live(); err != nil {
		return err
	}
	if !t.stopped {
		return newError(EINVAL, "egpu: the trace is running: Stop it first")
	}
	return nil
}

// Stop stops recording: it waits for the GPU's work, flushes CUPTI's
// buffers and joins launches to kernels. A second Stop does nothing.
func (t *Trace) Stop() error {
	defer t.lock()()
	if err := t.live(); err != nil {
		return err
	}
	if t.stopped {
		return nil
	}
	if _, err := call(func() int { return capi.Egpu_trace_stop(t.h) }); err != nil {
		return err
	}
	t.stopped = true
	return nil
}

// Close frees the trace, stopping it first if needed; a second Close does
// nothing.
func (t *Trace) Close() {
	defer t.lock()()
	if t.h == nil {
		return
	}
	capi.Egpu_trace_free(t.h)
	t.h = nil
	runtime.SetFinalizer(t, nil)
}

// Stats gives the totals of the stopped trace (EINVAL while it runs).
func (t *Trace) Stats() (TraceStats, error) {
	defer t.lock()()
	if err := t.done(); err != nil {
		return TraceStats{}, err
	}
	s := capi.NewEgpu_trace_stats_t()
	if s.Swigcptr() == 0 {
		return TraceStats{}, newError(ENOMEM, "egpu: out of memory for trace stats")
	}
	defer capi.DeleteEgpu_trace_stats_t(s)
	if _, err := call(func() int { return capi.Egpu_trace_stats(t.h, s) }); err != nil {
		return TraceStats{}, err
	}
	return TraceStats{
		Launches:     s.GetLaunches(),
		Kernels:      s.GetKernels(),
		Matched:      s.GetMatched(),
		Copies:       s.GetCopies(),
		Lost:         s.GetLost(),
		GPUTime:      time.Duration(s.GetGpu_ns()),
		Devices:      uint32(s.GetDevices()),
		HostTime:     time.Duration(s.GetHost_ns()),
		StackTime:    time.Duration(s.GetStack_ns()),
		PythonTime:   time.Duration(s.GetPython_ns()),
		Stacks:       s.GetStacks(),
		StacksSlow:   s.GetStacks_slow(),
		StacksReused: s.GetStacks_reused(),
		SlowFrame:    s.GetSlow_frame(),
		StreamFull:   s.GetStream_full(),
	}, nil
}

// Kernels gives the stopped trace's kernels, most GPU time first (EINVAL
// while it runs).
func (t *Trace) Kernels() ([]TraceKernel, error) {
	defer t.lock()()
	if err := t.done(); err != nil {
		return nil, err
	}
	n := capi.Egpu_trace_kernel_cnt(t.h)
	out := make([]TraceKernel, 0, n)
	for i := int64(0); i < n; i++ {
		k := capi.Egpu_trace_kernel(t.h, i)
		out = append(out, TraceKernel{
			Name:        k.GetName(),
			Launches:    k.GetLaunches(),
			GPUTime:     time.Duration(k.GetGpu_ns()),
			HottestPath: k.GetHottest_path(),
			HottestTime: time.Duration(k.GetHottest_ns()),
		})
	}
	return out, nil
}

// Write writes the stopped trace to @path in the format its suffix names:
// .perfetto-trace (Perfetto's binary trace), .folded, .json (Chrome /
// Perfetto JSON), .svg, .txt (the summary), .gz (as in "gpu.pb.gz") or
// .pprof (pprof). "-" needs WriteFormat.
func (t *Trace) Write(path string) error {
	format, ok := traceSuffixes[filepath.Ext(path)]
	if !ok {
		return newError(EINVAL, "egpu: "+path+": say the format (WriteFormat), or use one of "+
			".perfetto-trace, .folded, .json, .svg, .txt, .pb.gz, .pprof")
	}
	return t.WriteFormat(path, format)
}

// WriteFormat writes the stopped trace to @path ("-": standard output) as
// @format (EINVAL while it runs, EIO when @path cannot be written).
func (t *Trace) WriteFormat(path string, format TraceFormat) error {
	if format == TracePprof {
		return t.WritePprof(path, false)
	}
	defer t.lock()()
	if err := t.done(); err != nil {
		return err
	}
	_, err := call(func() int {
		return capi.Egpu_trace_write(t.h, capi.Enum_SS_egpu_trace_format(format), path)
	})
	return err
}

// WritePprof writes the stopped trace as a gzip'd pprof profile, without
// its memcpy and memset operations when @noCopies.
func (t *Trace) WritePprof(path string, noCopies bool) error {
	defer t.lock()()
	if err := t.done(); err != nil {
		return err
	}
	_, err := call(func() int { return capi.Trace_write_pprof(t.h, path, noCopies) })
	return err
}

// Summary is the text table of TraceSummary: the top kernels by GPU time,
// their launches and hottest call paths.
func (t *Trace) Summary() (string, error) {
	dir, err := os.MkdirTemp("", "egpu-trace-")
	if err != nil {
		return "", newError(EIO, "egpu: trace summary: "+err.Error())
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "summary.txt")
	if err := t.WriteFormat(path, TraceSummary); err != nil {
		return "", err
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return "", newError(EIO, "egpu: trace summary: "+err.Error())
	}
	return strings.ToValidUTF8(string(text), "\uFFFD"), nil
}
