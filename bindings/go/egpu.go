// SPDX-License-Identifier: MIT

// Package egpu runs eBPF programs inside NVIDIA GPU kernels through
// libegpu: load an eBPF object, read and write its maps, run its programs
// on the CPU or a GPU, and splice them into CUDA kernels' PTX. StartTrace
// joins the process's kernel launches to the CPU call stacks that made
// them (CUPTI).
//
//	ctx, err := egpu.NewContext(nil)
//	if err != nil { ... }
//	defer ctx.Close()
//	obj, err := ctx.Load("probe.bpf.o")
//	n, err := obj.AttachAll()
//	ptx, report, err := ctx.Instrument(kernelsPTX) // or ctx.ModuleLoad
//
// Errors are *Error values carrying the library's message; errors.Is(err,
// egpu.ENOENT) and the other Errno values tell the cause. A Context and
// everything loaded into it may be used from several goroutines: each
// call into the library holds the context's lock (ring buffer consumers
// poll without it). Close releases what the C library holds; a Context
// nobody closed is freed when the garbage collector finds it unreachable,
// a safety net only (its GPU memory stays allocated until then).
package egpu

import (
	"runtime"
	"sync"
	"time"

	"libegpu.dev/egpu/internal/capi"
)

// AttachPoint is where in a kernel a program runs.
type AttachPoint int

const (
	AttachNone AttachPoint = 0 // not attachable: run directly only
	Entry      AttachPoint = 1 // at kernel entry, every thread
	Exit       AttachPoint = 2 // at every ret/exit, every thread
	Mem        AttachPoint = 3 // before every memory access
)

func (a AttachPoint) String() string {
	return capi.Egpu_attach_point_str(capi.Enum_SS_egpu_attach_point(a))
}

// Backend is where Prog.Run executes a program.
type Backend int

const (
	CPU Backend = 0 // host code through LLVM ORC; needs no GPU
	GPU Backend = 1 // one GPU thread
)

// HelperABI is the helper convention a program is built against.
type HelperABI int

const (
	HelpersGPU         HelperABI = 0 // libegpu's helpers (the default)
	HelpersConformance HelperABI = 1 // the bpf_conformance suite's
)

// Version is the library's version, "MAJOR.MINOR.PATCH".
func Version() string { return capi.Egpu_version() }

// GPUAvailable says whether a CUDA driver and at least one GPU are usable.
func GPUAvailable() bool { return CheckGPU() == nil }

// CheckGPU returns nil when a GPU is usable, else an ENODEV error saying why.
func CheckGPU() error {
	_, err := call(func() int {
		if capi.Egpu_gpu_available() == 1 {
			return 0
		}
		return int(ENODEV)
	})
	return err
}

// Options configure a Context; the zero value (or nil) gives the defaults.
type Options struct {
	SM          string // PTX target, e.g. "sm_90" (the default)
	Offline     bool   // instrument for inspection only, without a GPU
	ThreadSlots uint32 // per-thread map slots on the GPU; 0: the default
	NoInline    bool   // call probes from their sites instead of copying them in
	// MemInlineLimit bounds the bytes of copies of one memory probe a
	// module receives; past it the functions with the most sites call the
	// probe. 0: the module's size, at least 16 MiB; MemInlineUnlimited:
	// no bound.
	MemInlineLimit uint64
}

// MemInlineUnlimited as Options.MemInlineLimit copies memory probes into
// every site.
const MemInlineUnlimited = ^uint64(0)

// Context owns the objects loaded into it, their maps and attachments,
// and (once a GPU call needs it) the CUDA context binding.
type Context struct {
	mu      sync.Mutex // held by every call into the library
	h       capi.Struct_SS_egpu_ctx
	objs    []*Obj
	metrics []*Metrics // freed before the objects whose maps they read
	fin     *ctxFinalizer
}

// ctxFinalizer frees a context nobody closed. It is its own object, outside
// the Context <-> Obj cycle, for a finalizer in a cycle may never run.
// It also holds the handles of the context's Go helpers (RegisterHelper),
// released once the context (which makes the calls still queued) is gone.
type ctxFinalizer struct {
	h       capi.Struct_SS_egpu_ctx
	helpers []uintptr
}

func (f *ctxFinalizer) free() {
	if f.h != nil {
		capi.Egpu_ctx_free(f.h)
		f.h = nil
	}
	for _, h := range f.helpers {
		capi.ReleaseHelper(h)
	}
	f.helpers = nil
}

// lock takes the context's lock and returns its release, for a defer.
func (c *Context) lock() func() {
	c.mu.Lock()
	return c.mu.Unlock
}

// NewContext makes a context. It needs no GPU: the CUDA driver is opened
// only when a GPU operation first asks for it.
func NewContext(opts *Options) (*Context, error) {
	if opts == nil {
		opts = &Options{}
	}
	h, err := handle(EUNKNOWN, func() capi.Struct_SS_egpu_ctx {
		return capi.Ctx_new(opts.SM, opts.Offline, uint(opts.ThreadSlots), opts.NoInline,
			opts.MemInlineLimit)
	})
	if err != nil {
		return nil, err
	}
	c := &Context{h: h, fin: &ctxFinalizer{h: h}}
	runtime.SetFinalizer(c.fin, (*ctxFinalizer).free)
	return c, nil
}

// Close frees the context and everything loaded into it; a second Close
// does nothing.
func (c *Context) Close() {
	c.mu.Lock()
	objs := append([]*Obj(nil), c.objs...)
	c.mu.Unlock()
	for _, o := range objs {
		o.closeRings() // each takes the lock itself
	}
	defer c.lock()()
	if c.h == nil {
		return
	}
	for len(c.metrics) > 0 {
		c.metrics[0].closeLocked()
	}
	for _, o := range c.objs {
		o.h = nil
	}
	c.objs = nil
	c.fin.free()
	c.h = nil
}

// without returns @s less its first @x (in place): how a closed handle
// leaves the list of what its owner closes.
func without[T comparable](s []T, x T) []T {
	for i, y := range s {
		if y == x {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}

func (c *Context) live() error {
	if c.h == nil {
		return newError(EINVAL, "egpu: the context is closed")
	}
	return nil
}

// LoadOptions name a loaded object and choose its helper convention. A
// program the verifier refuses keeps its verdict (Prog.Verdict) and the
// object loads; with Strict the load fails instead.
type LoadOptions struct {
	Name    string // for messages; "": the file name
	Helpers HelperABI
	Strict  bool
}

// Load loads an eBPF ELF object file.
func (c *Context) Load(path string) (*Obj, error) { return c.LoadFile(path, nil) }

// LoadFile loads an eBPF ELF object file with options.
func (c *Context) LoadFile(path string, opts *LoadOptions) (*Obj, error) {
	o := loadOpts(opts)
	return c.load(func() capi.Struct_SS_egpu_obj {
		return capi.Load_file(c.h, path, o.Name, int(o.Helpers), o.Strict)
	})
}

// LoadBytes loads an eBPF ELF object from memory (copied).
func (c *Context) LoadBytes(elf []byte, opts *LoadOptions) (*Obj, error) {
	o := loadOpts(opts)
	return c.load(func() capi.Struct_SS_egpu_obj {
		return capi.Load_mem(c.h, elf, o.Name, int(o.Helpers), o.Strict)
	})
}

// LoadInsns loads raw instructions (8 bytes each, little-endian) as an
// object with one program named "prog".
func (c *Context) LoadInsns(insns []byte, opts *LoadOptions) (*Obj, error) {
	o := loadOpts(opts)
	return c.load(func() capi.Struct_SS_egpu_obj {
		return capi.Load_insns(c.h, insns, o.Name, int(o.Helpers), o.Strict)
	})
}

func loadOpts(opts *LoadOptions) LoadOptions {
	if opts == nil {
		return LoadOptions{}
	}
	return *opts
}

func (c *Context) load(f func() capi.Struct_SS_egpu_obj) (*Obj, error) {
	defer c.lock()()
	if err := c.live(); err != nil {
		return nil, err
	}
	h, err := handle(EUNKNOWN, f)
	if err != nil {
		return nil, err
	}
	obj := newObj(c, h)
	c.objs = append(c.objs, obj)
	return obj, nil
}

// KernelReport is what instrumentation did to one kernel.
type KernelReport struct {
	Name        string // mangled, as in the PTX
	Demangled   string
	KernelID    uint32 // the kernel_id probes see in their ctx
	EntryPoints uint32
	ExitPoints  uint32
	Programs    uint32
	Inlined     uint32 // probe bodies copied in (not called)
	MemPoints   uint32 // memory instructions probed, in the kernel and its .funcs
}

// Report summarises one instrumentation.
type Report struct {
	KernelCount    uint32
	KernelsPatched uint32
	EntryPoints    uint32
	ExitPoints     uint32
	Programs       uint32
	InstrumentTime time.Duration
	Kernels        []KernelReport
	MemSites       []MemSite // the memory instructions probed
	Warnings       []string  // attachments whose pattern matched no kernel
	MemCalled      uint32    // memory probes called past Options.MemInlineLimit
}

func reportOf(r capi.Egpu_report) Report {
	rep := Report{
		KernelCount:    uint32(r.GetKernel_cnt()),
		KernelsPatched: uint32(r.GetKernels_patched()),
		EntryPoints:    uint32(r.GetEntry_points()),
		ExitPoints:     uint32(r.GetExit_points()),
		Programs:       uint32(r.GetPrograms()),
		InstrumentTime: time.Duration(r.GetInstrument_ms() * float64(time.Millisecond)),
		MemCalled:      uint32(r.GetMem_called()),
	}
	for i := uint32(0); i < rep.KernelCount; i++ {
		k := r.Kernel(uint(i))
		rep.Kernels = append(rep.Kernels, KernelReport{
			Name:        k.GetName(),
			Demangled:   k.GetDemangled(),
			KernelID:    uint32(k.GetKernel_id()),
			EntryPoints: uint32(k.GetEntry_points()),
			ExitPoints:  uint32(k.GetExit_points()),
			Programs:    uint32(k.GetPrograms()),
			Inlined:     uint32(k.GetInlined()),
			MemPoints:   uint32(k.GetMem_points()),
		})
	}
	for i := uint(0); i < r.GetMem_site_cnt(); i++ {
		rep.MemSites = append(rep.MemSites, memSiteOf(r.Mem_site(i)))
	}
	for i := uint(0); i < r.GetWarning_cnt(); i++ {
		rep.Warnings = append(rep.Warnings, r.Warning(i))
	}
	return rep
}

// Instrument splices every attached program into a module, given as PTX
// text or a fatbin's bytes in a string, and returns the new PTX and what
// was done. Without an offline context the maps are bound to GPU memory,
// which needs a GPU.
func (c *Context) Instrument(ptx string) (string, Report, error) {
	defer c.lock()()
	if err := c.live(); err != nil {
		return "", Report{}, err
	}
	r := capi.NewEgpu_report()
	if r.Swigcptr() == 0 {
		return "", Report{}, newError(ENOMEM, "egpu: out of memory for a report")
	}
	defer capi.DeleteEgpu_report(r)
	var out string
	if _, err := call(func() int { return capi.Egpu_instrument_ptx(c.h, ptx, &out, r) }); err != nil {
		return "", Report{}, err
	}
	return out, reportOf(r), nil
}

// ModuleLoad instruments PTX as Instrument does and loads it into the
// current CUDA context (the primary one if none is current). It returns
// the CUmodule handle.
func (c *Context) ModuleLoad(ptx string) (uintptr, error) {
	defer c.lock()()
	if err := c.live(); err != nil {
		return 0, err
	}
	var mod uint64
	_, err := call(func() int { return capi.Egpu_module_load(c.h, &mod, ptx) })
	return uintptr(mod), err
}

// Obj is a loaded eBPF object.
type Obj struct {
	ctx   *Context
	h     capi.Struct_SS_egpu_obj
	name  string
	progs []*Prog
	maps  []*Map
	rings []*RingBuffer // consumers of its maps, closed before it
}

func newObj(c *Context, h capi.Struct_SS_egpu_obj) *Obj {
	o := &Obj{ctx: c, h: h, name: capi.Egpu_obj_name(h)}
	for p := capi.Egpu_obj_next_prog(h, capi.SwigcptrStruct_SS_egpu_prog(0)); p.Swigcptr() != 0; p = capi.Egpu_obj_next_prog(h, p) {
		o.progs = append(o.progs, newProg(o, p))
	}
	for m := capi.Egpu_obj_next_map(h, capi.SwigcptrStruct_SS_egpu_map(0)); m.Swigcptr() != 0; m = capi.Egpu_obj_next_map(h, m) {
		o.maps = append(o.maps, newMap(o, m))
	}
	return o
}

func (o *Obj) live() error {
	if o.h == nil {
		return newError(EINVAL, "egpu: object '"+o.name+"' is closed")
	}
	return nil
}

// Name of the object (its file name unless LoadOptions named it).
func (o *Obj) Name() string { return o.name }

// Programs of the object, in ELF order.
func (o *Obj) Programs() []*Prog { return append([]*Prog(nil), o.progs...) }

// Maps of the object, global data sections included ("name.data" style).
func (o *Obj) Maps() []*Map { return append([]*Map(nil), o.maps...) }

// Program by name; an ENOENT error if there is none.
func (o *Obj) Program(name string) (*Prog, error) {
	for _, p := range o.progs {
		if p.name == name {
			return p, nil
		}
	}
	return nil, o.notFound(func() int { capi.Egpu_obj_prog(o.h, name); return int(ENOENT) })
}

// Map by name; an ENOENT error if there is none.
func (o *Obj) Map(name string) (*Map, error) {
	for _, m := range o.maps {
		if m.name == name {
			return m, nil
		}
	}
	return nil, o.notFound(func() int { capi.Egpu_obj_map(o.h, name); return int(ENOENT) })
}

// notFound asks the library for its message about a missing name.
func (o *Obj) notFound(lookup func() int) error {
	defer o.ctx.lock()()
	if err := o.live(); err != nil {
		return err
	}
	_, err := call(lookup)
	return err
}

// AttachAll attaches every program whose section names an attach point
// (gpu/entry/K, gpu/exit/K, kprobe/K, ...) and returns how many.
func (o *Obj) AttachAll() (int, error) {
	defer o.ctx.lock()()
	if err := o.live(); err != nil {
		return 0, err
	}
	return call(func() int { return capi.Egpu_attach_all(o.h) })
}

// Close closes the object, its programs, maps and attachments.
func (o *Obj) Close() {
	o.closeRings() // each takes the lock itself
	defer o.ctx.lock()()
	if o.h == nil {
		return
	}
	o.ctx.objs = without(o.ctx.objs, o)
	capi.Egpu_obj_close(o.h)
	o.h = nil
}

func (o *Obj) closeRings() {
	o.ctx.mu.Lock()
	rings := append([]*RingBuffer(nil), o.rings...)
	o.ctx.mu.Unlock()
	for _, rb := range rings {
		rb.Close()
	}
}

// Prog is a program of an object.
type Prog struct {
	obj     *Obj
	h       capi.Struct_SS_egpu_prog
	name    string
	section string
	kernel  string
	at      AttachPoint
	insns   int
}

func newProg(o *Obj, h capi.Struct_SS_egpu_prog) *Prog {
	return &Prog{obj: o, h: h,
		name:    capi.Egpu_prog_name(h),
		section: capi.Egpu_prog_section(h),
		kernel:  capi.Egpu_prog_kernel(h),
		at:      AttachPoint(capi.Egpu_prog_attach_point(h)),
		insns:   int(capi.Egpu_prog_insn_cnt(h)),
	}
}

// Name is the program's function name in the ELF.
func (p *Prog) Name() string { return p.name }

// Section is the ELF section it came from ("" for raw programs).
func (p *Prog) Section() string { return p.section }

// AttachPoint is the attach point its section names.
func (p *Prog) AttachPoint() AttachPoint { return p.at }

// Kernel is the kernel name or glob its section names ("" if none).
func (p *Prog) Kernel() string { return p.kernel }

// InsnCount is the number of instructions after linking (lddw counts 2).
func (p *Prog) InsnCount() int { return p.insns }

// Insns returns a copy of the linked instructions, 8 bytes each.
func (p *Prog) Insns() ([]byte, error) {
	defer p.obj.ctx.lock()()
	if err := p.obj.live(); err != nil {
		return nil, err
	}
	out := make([]byte, 8*p.insns)
	capi.Prog_insns(p.h, out)
	return out, nil
}

// Link is an attachment of a program to kernels.
type Link struct {
	prog *Prog
	h    capi.Struct_SS_egpu_link
}

// Attach attaches the program at @at of every kernel matching @kernel (the
// mangled or demangled name, or a glob). It takes effect at the next
// Instrument or ModuleLoad of the context.
func (p *Prog) Attach(kernel string, at AttachPoint) (*Link, error) {
	return p.AttachWith(kernel, at, nil)
}

// AttachWith is Attach with options: for a memory probe (Mem), the state
// spaces and access kinds it runs before.
func (p *Prog) AttachWith(kernel string, at AttachPoint, opts *AttachOptions) (*Link, error) {
	defer p.obj.ctx.lock()()
	if err := p.obj.live(); err != nil {
		return nil, err
	}
	spaces, kinds, err := opts.masks()
	if err != nil {
		return nil, err
	}
	h, err := handle(EUNKNOWN, func() capi.Struct_SS_egpu_link {
		return capi.Attach_kernel(p.h, kernel, int(at), uint(spaces), uint(kinds),
			opts != nil && opts.Strict)
	})
	if err != nil {
		return nil, err
	}
	return &Link{prog: p, h: h}, nil
}

// Detach removes the attachment; closing the program's object removes it
// too, and Detach then does nothing.
func (l *Link) Detach() {
	defer l.prog.obj.ctx.lock()()
	if l.h != nil && l.prog.obj.h != nil {
		capi.Egpu_link_destroy(l.h)
	}
	l.h = nil
}

// Run runs the program once with @mem as its r1/r2 (the program's stores
// land in @mem) on @backend and returns r0.
func (p *Prog) Run(mem []byte, backend Backend) (uint64, error) {
	r0, _, err := p.RunTimed(mem, backend)
	return r0, err
}

// RunTimed is Run that also gives the execution time (without translation).
func (p *Prog) RunTimed(mem []byte, backend Backend) (uint64, time.Duration, error) {
	defer p.obj.ctx.lock()()
	if err := p.obj.live(); err != nil {
		return 0, 0, err
	}
	var r0 uint64
	var ns float64
	_, err := call(func() int { return capi.Prog_run(p.h, int(backend), mem, nil, &r0, &ns) })
	return r0, time.Duration(ns), err
}

// RunProbe runs an entry or exit probe once on the CPU, with params as
// the parameter bytes of the kernel it probes (ctx->params,
// bpf_egpu_read_param): at least as many as the probe reads directly.
// Returns r0.
func (p *Prog) RunProbe(params []byte) (uint64, error) {
	defer p.obj.ctx.lock()()
	if err := p.obj.live(); err != nil {
		return 0, err
	}
	var r0 uint64
	var ns float64
	_, err := call(func() int { return capi.Prog_run(p.h, int(CPU), nil, params, &r0, &ns) })
	return r0, err
}

// JitOptions choose the output of JitPTX.
type JitOptions struct {
	SM     string // target; "": the context's
	Func   string // PTX function name; "": egpu_prog_NAME
	Kernel bool   // also emit a one-thread .entry FUNC_kernel
	CtxLen uint32 // programs without an attach point: bytes at r1
}

// JitPTX translates the program to PTX: a .visible .func taking (ctx,
// ctx_len) and returning r0, with JitOptions.Kernel also an .entry.
func (p *Prog) JitPTX(opts *JitOptions) (string, error) {
	defer p.obj.ctx.lock()()
	if err := p.obj.live(); err != nil {
		return "", err
	}
	if opts == nil {
		opts = &JitOptions{}
	}
	var ptx string
	_, err := call(func() int {
		return capi.Prog_jit_ptx(p.h, opts.SM, opts.Func, opts.Kernel, uint(opts.CtxLen), &ptx)
	})
	return ptx, err
}

// Verdict is the verifier's verdict at load: true if the program was
// accepted (or, without an attach point, is verified only when run), else
// false and the refusal, naming the instruction and source line.
func (p *Prog) Verdict() (bool, string) {
	defer p.obj.ctx.lock()()
	if p.obj.live() != nil {
		return false, "egpu: object '" + p.obj.name + "' is closed"
	}
	if capi.Prog_verdict(p.h) == 0 {
		return true, ""
	}
	return false, capi.Prog_refusal(p.h)
}

// VerifyOptions choose how Verify checks a program.
type VerifyOptions struct {
	At      *AttachPoint // nil: the program's own
	CtxLen  uint32       // direct runs (AttachNone): bytes at r1
	Verbose int          // 1: the whole failing path; 2: every step
}

// Verification is what the verifier said of a program.
type Verification struct {
	Accepted       bool
	Message        string // the refusal ("" if accepted)
	Log            string // the report; the failing path's last steps
	InsnsProcessed uint64
	States         uint64
	VerifyTime     time.Duration
}

// Verify runs the verifier. A refusal is a Verification with Accepted
// false, not an error; errors are for everything else.
func (p *Prog) Verify(opts *VerifyOptions) (Verification, error) {
	defer p.obj.ctx.lock()()
	if err := p.obj.live(); err != nil {
		return Verification{}, err
	}
	if opts == nil {
		opts = &VerifyOptions{}
	}
	at := -1
	if opts.At != nil {
		at = int(*opts.At)
	}
	var v Verification
	var stats [2]uint64
	var ms float64
	_, err := call(func() int {
		rc := capi.Prog_verify(p.h, at, uint(opts.CtxLen), opts.Verbose, &stats[0], &ms, &v.Log)
		if rc == int(EVERIFY) {
			v.Message = capi.Egpu_errmsg()
			return 0
		}
		v.Accepted = rc == 0
		return rc
	})
	v.InsnsProcessed, v.States = stats[0], stats[1]
	v.VerifyTime = time.Duration(ms * float64(time.Millisecond))
	return v, err
}
