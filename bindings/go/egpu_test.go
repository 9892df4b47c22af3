// SPDX-License-Identifier: MIT

package egpu_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"libegpu.dev/egpu"
)

// testData is a file built by the build (ctest sets the variable).
func testData(t *testing.T, env string) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		t.Skipf("%s is not set: run the tests through ctest", env)
	}
	return path
}

// loadIn makes a context with @opts (closed when the test ends) and loads
// the object the build passes in @env.
func loadIn(t *testing.T, opts *egpu.Options, env string) (*egpu.Context, *egpu.Obj) {
	t.Helper()
	ctx, err := egpu.NewContext(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctx.Close)
	obj, err := ctx.Load(testData(t, env))
	if err != nil {
		t.Fatal(err)
	}
	return ctx, obj
}

// load opens an offline context with testdata/probes.bpf.o loaded.
func load(t *testing.T) (*egpu.Context, *egpu.Obj) {
	t.Helper()
	return loadIn(t, &egpu.Options{Offline: true}, "EGPU_TEST_PROBES")
}

func mustMap(t *testing.T, obj *egpu.Obj, name string) *egpu.Map {
	t.Helper()
	m, err := obj.Map(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestVersion(t *testing.T) {
	if !strings.HasPrefix(egpu.Version(), "0.") {
		t.Fatalf("version %q", egpu.Version())
	}
}

func TestProgramsAndMaps(t *testing.T) {
	_, obj := load(t)
	var names []string
	for _, p := range obj.Programs() {
		names = append(names, p.Name())
	}
	if strings.Join(names, ",") != "add,on_entry,on_exit" {
		t.Fatalf("programs %v", names)
	}
	p, err := obj.Program("on_entry")
	if err != nil {
		t.Fatal(err)
	}
	if p.Section() != "gpu/entry/add_one" || p.AttachPoint() != egpu.Entry ||
		p.Kernel() != "add_one" || p.AttachPoint().String() != "entry" {
		t.Fatalf("on_entry: %q %v %q", p.Section(), p.AttachPoint(), p.Kernel())
	}
	insns, err := p.Insns()
	if err != nil || len(insns) != 8*p.InsnCount() || p.InsnCount() < 3 {
		t.Fatalf("insns: %d bytes for %d, %v", len(insns), p.InsnCount(), err)
	}
	counts := mustMap(t, obj, "counts")
	if counts.Type() != egpu.MapHash || counts.KeySize() != 4 ||
		counts.ValueSize() != 8 || counts.MaxEntries() != 8 {
		t.Fatalf("counts: %v %d %d %d", counts.Type(), counts.KeySize(),
			counts.ValueSize(), counts.MaxEntries())
	}
}

func TestNotFoundCarriesTheMessage(t *testing.T) {
	_, obj := load(t)
	_, err := obj.Program("nope")
	var e *egpu.Error
	if !errors.Is(err, egpu.ENOENT) || !errors.As(err, &e) ||
		!strings.Contains(e.Msg, "no program 'nope'") {
		t.Fatalf("Program(nope): %v", err)
	}
	if _, err := obj.Map("nope"); !errors.Is(err, egpu.ENOENT) {
		t.Fatalf("Map(nope): %v", err)
	}
}

func TestHashMap(t *testing.T) {
	_, obj := load(t)
	counts := mustMap(t, obj, "counts")
	for k := uint32(0); k < 8; k++ {
		if err := counts.UpdateUint64(k, uint64(k)*10, egpu.NoExist); err != nil {
			t.Fatal(err)
		}
	}
	if err := counts.UpdateUint64(9, 1, egpu.Any); !errors.Is(err, egpu.E2BIG) {
		t.Fatalf("full map: %v", err)
	}
	if err := counts.UpdateUint64(3, 1, egpu.NoExist); !errors.Is(err, egpu.EEXIST) {
		t.Fatalf("NoExist on a present key: %v", err)
	}
	if v, err := counts.LookupUint64(3); err != nil || v != 30 {
		t.Fatalf("lookup 3: %d %v", v, err)
	}
	if err := counts.DeleteUint32(3); err != nil {
		t.Fatal(err)
	}
	if _, err := counts.LookupUint64(3); !errors.Is(err, egpu.ENOENT) {
		t.Fatalf("deleted key: %v", err)
	}
	seen := map[uint32]uint64{}
	it := counts.Iterate()
	for it.Next() {
		seen[uint32(it.Key()[0])] = uint64(it.Value()[0])
	}
	if it.Err() != nil || len(seen) != 7 || seen[7] != 70 {
		t.Fatalf("iterated %v, %v", seen, it.Err())
	}
}

func TestSizesAreChecked(t *testing.T) {
	_, obj := load(t)
	counts := mustMap(t, obj, "counts")
	if _, err := counts.Lookup([]byte{1, 2}); !errors.Is(err, egpu.EINVAL) ||
		!strings.Contains(err.Error(), "key of 2 bytes, expected 4") {
		t.Fatalf("short key: %v", err)
	}
	err := counts.Update([]byte{1, 0, 0, 0}, []byte{1}, egpu.Any)
	if !errors.Is(err, egpu.EINVAL) || !strings.Contains(err.Error(), "value of 1 bytes") {
		t.Fatalf("short value: %v", err)
	}
}

func TestArrayMap(t *testing.T) {
	_, obj := load(t)
	slots := mustMap(t, obj, "slots")
	if err := slots.UpdateUint64(4, 1, egpu.Any); !errors.Is(err, egpu.E2BIG) {
		t.Fatalf("index 4 of 4: %v", err)
	}
	if err := slots.DeleteUint32(0); !errors.Is(err, egpu.EINVAL) {
		t.Fatalf("array delete: %v", err)
	}
	n := 0
	for it := slots.Iterate(); it.Next(); n++ {
	}
	if n != 4 {
		t.Fatalf("%d keys", n)
	}
}

func TestPerThreadMap(t *testing.T) {
	_, obj := load(t)
	for _, name := range []string{"per_thread", "per_sm"} {
		checkPerThread(t, mustMap(t, obj, name))
	}
	if m := mustMap(t, obj, "per_sm"); m.Type() != egpu.MapSMArray {
		t.Fatalf("per_sm is a %v", m.Type())
	}
}

// checkPerThread: a map with a value per thread or SM, seen alike.
func checkPerThread(t *testing.T, m *egpu.Map) {
	if err := m.UpdateUint64(0, 5, egpu.Any); err != nil {
		t.Fatal(err)
	}
	vals, err := m.ValuesUint64(0)
	if err != nil || len(vals) != m.ValuesPerKey() || vals[0] != 5 {
		t.Fatalf("values %v, %v", vals, err)
	}
	if sum, err := m.SumUint64(0); err != nil || sum != 5*uint64(m.ValuesPerKey()) {
		t.Fatalf("sum %d, %v", sum, err)
	}
}

func TestRunOnCPU(t *testing.T) {
	_, obj := load(t)
	p, err := obj.Program("add")
	if err != nil {
		t.Fatal(err)
	}
	mem := []byte{2, 5, 0}
	for want := uint64(5); want <= 15; want += 5 {
		if r0, err := p.Run(mem, egpu.CPU); err != nil || r0 != want {
			t.Fatalf("run: %d, %v; want %d", r0, err, want)
		}
	}
	if mem[2] != 7 {
		t.Fatalf("the program's store is missing: %v", mem)
	}
	if v, err := mustMap(t, obj, "counts").LookupUint64(2); err != nil || v != 15 {
		t.Fatalf("counts[2] = %d, %v", v, err)
	}
	if r0, _ := p.Run(nil, egpu.CPU); r0 != 1<<32-1 {
		t.Fatalf("no memory: r0 %d, want the program's -1 as 32 bits", r0)
	}
	if _, err := p.Run(mem, egpu.GPU); !errors.Is(err, egpu.EINVAL) ||
		!strings.Contains(err.Error(), "offline") {
		t.Fatalf("GPU run offline: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	ctx, _ := load(t)
	_, err := ctx.Load("/nonexistent/probe.o")
	var e *egpu.Error
	if !errors.As(err, &e) || !strings.Contains(e.Msg, "/nonexistent/probe.o") ||
		!errors.Is(err, egpu.EIO) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := ctx.Load(t.TempDir()); !errors.Is(err, egpu.EIO) ||
		!strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("directory: %v", err)
	}
	if _, err := ctx.LoadBytes([]byte("\x7fELF not really"), nil); !errors.Is(err, egpu.EFORMAT) {
		t.Fatalf("garbage: %v", err)
	}
	movR10 := []byte{0xb7, 0x0a, 0, 0, 0, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0}
	if _, err := ctx.LoadInsns(movR10, &egpu.LoadOptions{Name: "bad"}); err == nil ||
		!strings.Contains(err.Error(), "r10") {
		t.Fatalf("unsafe program: %v", err)
	}
	for _, sm := range []string{"gfx90a", "sm_1000", "sm_99999999999", "sm_31"} {
		if _, err := egpu.NewContext(&egpu.Options{SM: sm}); !errors.Is(err, egpu.EINVAL) ||
			!strings.Contains(err.Error(), sm) {
			t.Fatalf("bad target %s: %v", sm, err)
		}
	}
}

// GPUs newer than the JIT's LLVM get their own .target and .version.
func TestNewTargets(t *testing.T) {
	for sm, header := range map[string]string{"sm_100": ".version 8.6\n.target sm_100\n",
		"sm_120": ".version 8.7\n.target sm_120\n", "sm_100a": ".target sm_100a\n"} {
		ctx, err := egpu.NewContext(&egpu.Options{SM: sm, Offline: true})
		if err != nil {
			t.Fatalf("%s: %v", sm, err)
		}
		obj, err := ctx.LoadInsns([]byte{0xb7, 0, 0, 0, 7, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := obj.Program("prog")
		ptx, err := p.JitPTX(nil)
		if err != nil || !strings.Contains(ptx, header) {
			t.Fatalf("%s: %v\n%.300s", sm, err, ptx)
		}
		ctx.Close()
	}
}

func TestLoadInsnsRuns(t *testing.T) {
	ctx, _ := load(t)
	mov7 := []byte{0xb7, 0, 0, 0, 7, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0}
	obj, err := ctx.LoadInsns(mov7, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := obj.Program("prog")
	if err != nil {
		t.Fatal(err)
	}
	if r0, d, err := p.RunTimed(nil, egpu.CPU); err != nil || r0 != 7 || d < 0 {
		t.Fatalf("r0 %d in %v, %v", r0, d, err)
	}
}

func TestClosedHandlesAreRefused(t *testing.T) {
	ctx, obj := load(t)
	counts := mustMap(t, obj, "counts")
	obj.Close()
	obj.Close()
	if _, err := counts.LookupUint64(1); !errors.Is(err, egpu.EINVAL) {
		t.Fatalf("closed object: %v", err)
	}
	ctx.Close()
	if _, err := ctx.Load(testData(t, "EGPU_TEST_PROBES")); !errors.Is(err, egpu.EINVAL) {
		t.Fatalf("closed context: %v", err)
	}
}

func assemble(t *testing.T, ptx string, flags ...string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.ptx")
	if err := os.WriteFile(path, []byte(ptx), 0o644); err != nil {
		t.Fatal(err)
	}
	ptxas := os.Getenv("EGPU_PTXAS")
	if ptxas == "" {
		ptxas = "ptxas"
	}
	args := append([]string{"-arch=sm_90", "-o", os.DevNull}, flags...)
	if out, err := exec.Command(ptxas, append(args, path)...).CombinedOutput(); err != nil {
		t.Fatalf("ptxas: %v\n%s", err, out)
	}
}

func TestInstrumentOffline(t *testing.T) {
	ctx, obj := load(t)
	raw, err := os.ReadFile(testData(t, "EGPU_TEST_PTX"))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := obj.AttachAll(); err != nil || n != 2 {
		t.Fatalf("AttachAll: %d, %v", n, err)
	}
	ptx, rep, err := ctx.Instrument(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	if rep.KernelCount != 2 || rep.KernelsPatched != 1 || rep.EntryPoints != 1 ||
		rep.Programs != 2 || len(rep.Kernels) != 2 || rep.InstrumentTime <= 0 {
		t.Fatalf("report %+v", rep)
	}
	var scale egpu.KernelReport
	for _, k := range rep.Kernels {
		if k.Name != "add_one" {
			scale = k
		}
	}
	if !strings.HasPrefix(scale.Demangled, "scale(") || scale.Programs != 0 {
		t.Fatalf("scale: %+v", scale)
	}
	assemble(t, ptx)

	p, _ := obj.Program("on_exit")
	link, err := p.Attach("scale", egpu.Exit)
	if err != nil {
		t.Fatal(err)
	}
	if _, rep, err = ctx.Instrument(string(raw)); err != nil || rep.KernelsPatched != 2 {
		t.Fatalf("after Attach: %+v, %v", rep, err)
	}
	link.Detach()
	link.Detach()
	if _, rep, err = ctx.Instrument(string(raw)); err != nil || rep.KernelsPatched != 1 {
		t.Fatalf("after Detach: %+v, %v", rep, err)
	}
	if _, err := ctx.ModuleLoad(string(raw)); !errors.Is(err, egpu.EINVAL) {
		t.Fatalf("ModuleLoad offline: %v", err)
	}
}

func TestJitPTX(t *testing.T) {
	_, obj := load(t)
	p, _ := obj.Program("add")
	ptx, err := p.JitPTX(&egpu.JitOptions{Func: "add_fn", Kernel: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ptx, ".visible .func") || !strings.Contains(ptx, ".entry add_fn_kernel") {
		t.Fatalf("ptx:\n%s", ptx)
	}
	assemble(t, ptx, "-c") // -c: map helpers come from the device runtime
	if !bytes.Contains([]byte(ptx), []byte(".target sm_90")) {
		t.Fatal("not for the context's target")
	}
}
