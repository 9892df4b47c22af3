// SPDX-License-Identifier: MIT

package egpu_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"libegpu.dev/egpu"
)

// traceMode opens an offline context with ../python/tests/events.bpf.o and
// the PTX of add_one and scale.
func traceMode(t *testing.T) (*egpu.Context, *egpu.Obj, string) {
	t.Helper()
	ctx, obj := loadEvents(t)
	raw, err := os.ReadFile(testData(t, "EGPU_TEST_PTX"))
	if err != nil {
		t.Fatal(err)
	}
	return ctx, obj, string(raw)
}

func ringOf(t *testing.T, obj *egpu.Obj, name string) *egpu.Map {
	t.Helper()
	m, err := obj.Map(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Every global access of every kernel gets the trace's code, no probe.
func TestMemTraceRecordsEveryGlobalAccess(t *testing.T) {
	ctx, obj, ptx := traceMode(t)
	if err := ctx.MemTrace(ringOf(t, obj, "events"), nil); err != nil {
		t.Fatal(err)
	}
	out, rep, err := ctx.Instrument(ptx)
	if err != nil {
		t.Fatal(err)
	}
	n := strings.Count(out, "// egpu trace\n")
	if n == 0 || n != len(rep.MemSites) {
		t.Fatalf("%d traced sites, %d in the report", n, len(rep.MemSites))
	}
	for _, s := range rep.MemSites {
		if s.Space != egpu.SpaceGlobal {
			t.Fatalf("a %v access traced by default: %+v", s.Space, s)
		}
	}
	if strings.Contains(out, ".maxnreg") { // offline: no untraced count
		t.Fatal("a kernel capped offline")
	}
}

func TestMemTraceOptions(t *testing.T) {
	ctx, obj, ptx := traceMode(t)
	events := ringOf(t, obj, "events")
	opts := &egpu.MemTraceOptions{Kinds: []egpu.MemKind{egpu.MemStore}, MaxRegisters: 40}
	if err := ctx.MemTrace(events, opts); err != nil {
		t.Fatal(err)
	}
	out, rep, err := ctx.Instrument(ptx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.MemSites {
		if s.Kind != egpu.MemStore {
			t.Fatalf("a %v access traced: %+v", s.Kind, s)
		}
	}
	if !strings.Contains(out, ".maxnreg 40 // egpu trace\n") {
		t.Fatal("no cap of 40")
	}
	opts = &egpu.MemTraceOptions{Kernel: "nothing_like_it", MaxRegisters: egpu.MaxRegistersAny}
	if err := ctx.MemTrace(events, opts); err != nil {
		t.Fatal(err)
	}
	if out, _, err = ctx.Instrument(ptx); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "// egpu trace") || strings.Contains(out, ".maxnreg") {
		t.Fatal("a kernel the pattern does not match was traced or capped")
	}
}

func TestMemTraceBadArguments(t *testing.T) {
	ctx, obj, _ := traceMode(t)
	err := ctx.MemTrace(ringOf(t, obj, "plain"), nil)
	if !errors.Is(err, egpu.EINVAL) || !strings.Contains(err.Error(), "'plain' is not a ring map") {
		t.Fatalf("an array map as the ring: %v", err)
	}
	err = ctx.MemTrace(ringOf(t, obj, "events"), &egpu.MemTraceOptions{Spaces: []egpu.MemSpace{99}})
	if !errors.Is(err, egpu.EINVAL) || !strings.Contains(err.Error(), "memory space 99") {
		t.Fatalf("space 99: %v", err)
	}
	err = ctx.MemTrace(ringOf(t, obj, "events"), &egpu.MemTraceOptions{MaxRegisters: 300})
	if !errors.Is(err, egpu.EINVAL) || !strings.Contains(err.Error(), "max_registers 300") {
		t.Fatalf("300 registers: %v", err)
	}
	_, theirs := loadEvents(t)
	err = ctx.MemTrace(ringOf(t, theirs, "events"), nil)
	if !errors.Is(err, egpu.EINVAL) || !strings.Contains(err.Error(), "not a ring map of this context") {
		t.Fatalf("another context's ring: %v", err)
	}
	events := ringOf(t, obj, "events")
	obj.Close()
	if err := ctx.MemTrace(events, nil); !errors.Is(err, egpu.EINVAL) ||
		!strings.Contains(err.Error(), "closed") {
		t.Fatalf("a closed object's ring: %v", err)
	}
}
