// SPDX-License-Identifier: MIT

package egpu_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"libegpu.dev/egpu"
)

// memProbe opens an offline context with the counting memory probe
// (../python/tests/mem.bpf.c) loaded, and the PTX of add_one and scale.
func memProbe(t *testing.T) (*egpu.Context, *egpu.Prog, string) {
	t.Helper()
	return memProbeWith(t, &egpu.Options{Offline: true})
}

// memProbeWith is memProbe with a context made from @opts.
func memProbeWith(t *testing.T, opts *egpu.Options) (*egpu.Context, *egpu.Prog, string) {
	t.Helper()
	ctx, obj := loadIn(t, opts, "EGPU_TEST_MEM")
	p, err := obj.Program("count_mem")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(testData(t, "EGPU_TEST_PTX"))
	if err != nil {
		t.Fatal(err)
	}
	return ctx, p, string(raw)
}

// memSites attaches @p with @opts, instruments and detaches again.
func memSites(t *testing.T, ctx *egpu.Context, p *egpu.Prog, ptx string,
	opts *egpu.AttachOptions) (string, egpu.Report) {
	t.Helper()
	link, err := p.AttachWith("add_one", egpu.Mem, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer link.Detach()
	out, rep, err := ctx.Instrument(ptx)
	if err != nil {
		t.Fatal(err)
	}
	return out, rep
}

func TestMemSitesAreReported(t *testing.T) {
	ctx, p, ptx := memProbe(t)
	if p.AttachPoint() != egpu.Mem || p.Kernel() != "add_one" {
		t.Fatalf("count_mem: %v %q", p.AttachPoint(), p.Kernel())
	}
	out, rep := memSites(t, ctx, p, ptx, nil)
	if len(rep.MemSites) < 3 { // its parameters, x[i] loaded and stored
		t.Fatalf("%d sites: %+v", len(rep.MemSites), rep.MemSites)
	}
	lines := strings.Split(ptx, "\n")
	global := map[string]bool{}
	for i, s := range rep.MemSites {
		if s.Site != uint32(i) || s.KernelID != 0 || s.Function != "add_one" ||
			s.PTXLine == 0 || int(s.PTXLine) > len(lines) ||
			!strings.Contains(lines[s.PTXLine-1], s.Text) ||
			!(strings.HasPrefix(s.Text, "ld") || strings.HasPrefix(s.Text, "st")) ||
			s.Line != 0 || s.File != "" {
			t.Fatalf("site %d: %+v", i, s)
		}
		if s.Space == egpu.SpaceGlobal {
			global[s.Kind.String()+" "+s.Space.String()] = s.Size == 4
		}
	}
	if len(global) != 2 || !global["load global"] || !global["store global"] {
		t.Fatalf("global sites: %v", global)
	}
	if rep.Kernels[0].MemPoints != uint32(len(rep.MemSites)) || rep.Kernels[1].MemPoints != 0 {
		t.Fatalf("mem points: %+v", rep.Kernels)
	}
	assemble(t, out)
}

func TestMemMasksReduceTheSites(t *testing.T) {
	ctx, p, ptx := memProbe(t)
	_, every := memSites(t, ctx, p, ptx, &egpu.AttachOptions{})
	_, global := memSites(t, ctx, p, ptx, &egpu.AttachOptions{
		Spaces: []egpu.MemSpace{egpu.SpaceGlobal, egpu.SpaceShared}})
	if len(global.MemSites) == 0 || len(global.MemSites) >= len(every.MemSites) {
		t.Fatalf("%d global sites of %d", len(global.MemSites), len(every.MemSites))
	}
	for _, s := range global.MemSites {
		if s.Space != egpu.SpaceGlobal {
			t.Fatalf("not global: %+v", s)
		}
	}
	_, stores := memSites(t, ctx, p, ptx, &egpu.AttachOptions{
		Spaces: []egpu.MemSpace{egpu.SpaceGlobal}, Kinds: []egpu.MemKind{egpu.MemStore}})
	if len(stores.MemSites) != 1 || stores.MemSites[0].Kind != egpu.MemStore ||
		!strings.Contains(stores.MemSites[0].Text, "st.global") {
		t.Fatalf("stores: %+v", stores.MemSites)
	}
}

func TestMemBadOptionsAreRefused(t *testing.T) {
	_, p, _ := memProbe(t)
	for _, c := range []struct {
		opts egpu.AttachOptions
		msg  string
	}{
		{egpu.AttachOptions{Spaces: []egpu.MemSpace{9}},
			"memory space 9 is not one of generic, global, shared, local, const, param"},
		{egpu.AttachOptions{Kinds: []egpu.MemKind{0}},
			"memory access kind 0 is not one of load, store, atomic, async"},
	} {
		if _, err := p.AttachWith("add_one", egpu.Mem, &c.opts); !errors.Is(err, egpu.EINVAL) ||
			!strings.Contains(err.Error(), c.msg) {
			t.Fatalf("%+v: %v", c.opts, err)
		}
	}
	_, obj := load(t)
	entry, _ := obj.Program("on_entry")
	_, err := entry.AttachWith("add_one", egpu.Entry,
		&egpu.AttachOptions{Kinds: []egpu.MemKind{egpu.MemLoad}})
	if err == nil || !strings.Contains(err.Error(), "memory probes only") {
		t.Fatalf("masks on an entry probe: %v", err)
	}
}

func TestMemNames(t *testing.T) {
	if egpu.SpaceShared.String() != "shared" || egpu.MemAtomic.String() != "atomic" ||
		egpu.MemKind(7).String() != "MemKind(7)" || egpu.MemKernelShared != 1<<32-1 {
		t.Fatal(egpu.SpaceShared, egpu.MemAtomic, egpu.MemKind(7), egpu.MemKernelShared)
	}
}

func TestClockRefusedOffline(t *testing.T) {
	ctx, _ := load(t)
	for name, f := range map[string]func() (egpu.Clock, error){
		"ClockSync": ctx.ClockSync, "Clock": ctx.Clock} {
		if _, err := f(); !errors.Is(err, egpu.EINVAL) || !strings.Contains(err.Error(), "offline") {
			t.Fatalf("%s offline: %v", name, err)
		}
	}
}

func TestClockWithoutGPU(t *testing.T) {
	if egpu.GPUAvailable() {
		t.Skip("a GPU is usable here")
	}
	ctx, _ := loadIn(t, nil, "EGPU_TEST_PROBES")
	if _, err := ctx.ClockSync(); !errors.Is(err, egpu.ENODEV) ||
		!strings.Contains(err.Error(), "egpu_clock_sync") {
		t.Fatalf("ClockSync without a GPU: %v", err)
	}
	if _, err := ctx.Clock(); !errors.Is(err, egpu.ENODEV) {
		t.Fatalf("Clock without a GPU: %v", err)
	}
}

func TestClockGPUToHost(t *testing.T) {
	k := egpu.Clock{OffsetNs: 1000}
	if k.GPUToHost(5000) != 4000 || k.GPUToHost(10) != 0 {
		t.Fatal(k.GPUToHost(5000), k.GPUToHost(10))
	}
	late := egpu.Clock{OffsetNs: -1000}
	if late.GPUToHost(1<<64-10) != 1<<64-1 {
		t.Fatal(late.GPUToHost(1<<64 - 10))
	}
}

func TestMemInlineLimitCallsPastTheBound(t *testing.T) {
	for _, limit := range []uint64{1, egpu.MemInlineUnlimited} {
		ctx, p, ptx := memProbeWith(t, &egpu.Options{Offline: true, MemInlineLimit: limit})
		out, rep := memSites(t, ctx, p, ptx, nil)
		called := strings.Contains(out, "call \t(%egpu_m5)")
		if len(rep.MemSites) == 0 || called != (limit == 1) ||
			(limit == 1) != (rep.MemCalled == uint32(len(rep.MemSites))) ||
			(limit != 1 && rep.MemCalled != 0) {
			t.Fatalf("limit %d: %d sites, %d called, calls in the PTX %v",
				limit, len(rep.MemSites), rep.MemCalled, called)
		}
	}
}
