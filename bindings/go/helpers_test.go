// SPDX-License-Identifier: MIT

package egpu_test

import (
	"errors"
	"strings"
	"testing"

	"libegpu.dev/egpu"
)

const (
	hAdd5 = egpu.HelperUserMin + iota
	hNote
	hSum
	hFill
	hNone
)

// registerAll gives ../../tests/helpers/helpers.bpf.c its helpers: every
// signature shape, from func types and from explicit signatures.
func registerAll(t *testing.T, ctx *egpu.Context, notes *[]uint64) {
	t.Helper()
	regs := []struct {
		id   uint32
		name string
		fn   any
		sig  string
	}{
		{hAdd5, "add5", func(a, b, c, d uint64, e int32) uint64 {
			return a + 10*b + 100*c + 1000*d + 10000*uint64(e)
		}, ""},
		{hNote, "note", func(x uint64) { *notes = append(*notes, x) }, ""},
		{hSum, "sum", func(b [16]byte, base uint64) uint64 {
			for _, x := range b {
				base += uint64(x)
			}
			return base
		}, ""},
		{hFill, "fill", func(b []byte) int {
			for i := range b {
				b[i] = 0x11
			}
			return 0
		}, "u64 (u8[8])"},
		{hNone, "answer", func() uint64 { return 42 }, "u64 (void)"},
	}
	for _, r := range regs {
		if err := ctx.RegisterHelper(r.id, r.name, r.fn, r.sig); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
	}
}

func TestHelpersEveryShape(t *testing.T) {
	ctx, err := egpu.NewContext(&egpu.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctx.Close)
	var notes []uint64
	registerAll(t, ctx, &notes)
	obj, err := ctx.Load(testData(t, "EGPU_TEST_UHELPERS"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"five": 54321, "note": 1, "stack_buf": 220,
		"map_buf": 32, "out_buf": 1, "no_args": 42}
	for name, r0 := range want {
		p, _ := obj.Program(name)
		if got, err := p.Run(nil, egpu.CPU); err != nil || got != r0 {
			t.Errorf("%s: %d, %v; want %d", name, got, err, r0)
		}
	}
	if len(notes) != 1 || notes[0] != 7 {
		t.Errorf("note saw %v", notes)
	}
	p, _ := obj.Program("scalar_for_buf")
	if _, err := p.Run(nil, egpu.CPU); !strings.Contains(fmtErr(err), "r1 must point to 16 bytes") {
		t.Errorf("scalar_for_buf: %v", err)
	}
}

// A *[N]byte parameter is a writable buffer, the same as u8[N].
func TestHelperPointerToArray(t *testing.T) {
	ctx, _ := egpu.NewContext(&egpu.Options{Offline: true})
	t.Cleanup(ctx.Close)
	if err := ctx.RegisterHelper(hFill, "fill", func(b *[8]byte) uint64 {
		for i := range b {
			b[i] = 0x11
		}
		return 0
	}, ""); err != nil {
		t.Fatal(err)
	}
	obj, err := ctx.Load(testData(t, "EGPU_TEST_UHELPERS"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := obj.Program("out_buf")
	if r0, err := p.Run(nil, egpu.CPU); err != nil || r0 != 1 {
		t.Fatalf("out_buf: %d, %v", r0, err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestHelperRegistrationErrors(t *testing.T) {
	ctx, _ := egpu.NewContext(&egpu.Options{Offline: true})
	t.Cleanup(ctx.Close)
	ok := func(x uint64) uint64 { return x }
	cases := []struct {
		id   uint32
		fn   any
		sig  string
		want string
	}{
		{5, ok, "", "outside the user helper range"},
		{hNote, 7, "", "not a func"},
		{hNote, func(s string) {}, "", "argument 1 is a string"},
		{hNote, func() (int, int) { return 0, 0 }, "", "returns nothing or one integer"},
		{hNote, func([]byte) {}, "", "explicit signature"},
		{hNote, ok, "u64 (int)", "expected u64"},
		{hNote, ok, "u64 (u64, u64)", "cannot take 2 arguments"},
		{hNote, ok, "void (u64)", "do not match a helper returning void"},
		{hNote, func([4]byte) {}, "void (const u8[8])", "cannot take the signature's const u8[8]"},
	}
	for _, c := range cases {
		err := ctx.RegisterHelper(c.id, "h", c.fn, c.sig)
		if !errors.Is(err, egpu.EINVAL) || !strings.Contains(fmtErr(err), c.want) {
			t.Errorf("%v %q: %v; want EINVAL with %q", c.fn, c.sig, err, c.want)
		}
	}
	if err := ctx.RegisterHelper(hNote, "h", ok, ""); err != nil {
		t.Fatal(err)
	}
	if err := ctx.RegisterHelper(hNote, "h", ok, ""); !strings.Contains(fmtErr(err), "already registered") {
		t.Errorf("twice: %v", err)
	}
}
