// SPDX-License-Identifier: MIT

package egpu_test

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"libegpu.dev/egpu"
)

// tests/api/mixed.bpf.o: good_entry (accepted) and bad_exit (refused),
// both of saxpy, which the Python tests' kernels do not have.
func TestRefusedProgramKeepsItsObject(t *testing.T) {
	ctx, obj := loadIn(t, &egpu.Options{Offline: true}, "EGPU_TEST_MIXED")
	good, _ := obj.Program("good_entry")
	bad, _ := obj.Program("bad_exit")
	if ok, why := good.Verdict(); !ok || why != "" {
		t.Fatalf("good_entry: %v %q", ok, why)
	}
	ok, why := bad.Verdict()
	if ok || !strings.Contains(why, "mixed.bpf.c:28") {
		t.Fatalf("bad_exit: %v %q", ok, why)
	}
	if _, err := bad.Attach("saxpy", egpu.Exit); !errors.Is(err, egpu.EVERIFY) ||
		!strings.Contains(err.Error(), "bad_exit") {
		t.Fatalf("attaching bad_exit: %v", err)
	}
	if n, err := obj.AttachAll(); n != 1 || err != nil {
		t.Fatalf("AttachAll: %d %v", n, err)
	}
	if _, err := ctx.LoadFile(testData(t, "EGPU_TEST_MIXED"), &egpu.LoadOptions{Strict: true}); !errors.Is(err, egpu.EVERIFY) {
		t.Fatalf("strict load: %v", err)
	}
}

func TestVerifyGivesLogAndStatistics(t *testing.T) {
	_, obj := loadIn(t, &egpu.Options{Offline: true}, "EGPU_TEST_MIXED")
	good, _ := obj.Program("good_entry")
	bad, _ := obj.Program("bad_exit")
	v, err := good.Verify(nil)
	if err != nil || !v.Accepted || v.InsnsProcessed == 0 || v.States == 0 ||
		!strings.Contains(v.Log, "prog 'good_entry': accepted") {
		t.Fatalf("good_entry: %+v %v", v, err)
	}
	v, err = bad.Verify(nil)
	if err != nil || v.Accepted || !strings.Contains(v.Message, "out-of-bounds") ||
		!strings.Contains(v.Log, "failing path") {
		t.Fatalf("bad_exit: %+v %v", v, err)
	}
	none := egpu.AttachNone
	if v, err = bad.Verify(&egpu.VerifyOptions{At: &none, CtxLen: 48}); err != nil || !v.Accepted {
		t.Fatalf("bad_exit over 48 bytes: %+v %v", v, err)
	}
	if _, err = bad.JitPTX(&egpu.JitOptions{CtxLen: 8}); !errors.Is(err, egpu.EVERIFY) {
		t.Fatalf("JitPTX over 8 bytes: %v", err)
	}
}

func TestUnmatchedPatternWarnsUnlessStrict(t *testing.T) {
	ctx, obj := loadIn(t, &egpu.Options{Offline: true, NoInline: true}, "EGPU_TEST_MIXED")
	ptx, err := os.ReadFile(testData(t, "EGPU_TEST_PTX"))
	if err != nil {
		t.Fatal(err)
	}
	good, _ := obj.Program("good_entry")
	l, err := good.Attach("saxpy", egpu.Entry)
	if err != nil {
		t.Fatal(err)
	}
	_, rep, err := ctx.Instrument(string(ptx))
	if err != nil || len(rep.Warnings) != 1 ||
		!strings.Contains(rep.Warnings[0], "prog 'good_entry': no kernel matches 'saxpy'") {
		t.Fatalf("warnings %q, %v", rep.Warnings, err)
	}
	l.Detach()
	if _, err = good.AttachWith("saxpy", egpu.Entry, &egpu.AttachOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, err = ctx.Instrument(string(ptx)); !errors.Is(err, egpu.ENOENT) {
		t.Fatalf("strict: %v", err)
	}
}

// tests/api/params.bpf.o: entry probes of saxpy(float a, const float *x,
// float *y, int n) reading n (bytes 24..27) through bpf_egpu_read_param
// (record_n) and ctx->params (direct_n), run on the CPU.
func TestProbeRunsWithParams(t *testing.T) {
	_, obj := loadIn(t, &egpu.Options{Offline: true}, "EGPU_TEST_PARAMS")
	params := make([]byte, 28)
	binary.LittleEndian.PutUint32(params[24:], 1000)
	seen := mustMap(t, obj, "seen")
	for key, name := range map[uint32]string{0: "record_n", 4: "direct_n"} {
		p, _ := obj.Program(name)
		if r0, err := p.RunProbe(params); err != nil || r0 != 0 {
			t.Fatalf("%s: r0 %d, %v", name, r0, err)
		}
		k := binary.LittleEndian.AppendUint32(nil, key)
		if v, err := seen.Lookup(k); err != nil || binary.LittleEndian.Uint64(v) != 1000 {
			t.Fatalf("%s: seen[%d] = %v, %v", name, key, v, err)
		}
	}
	direct, _ := obj.Program("direct_n")
	if _, err := direct.RunProbe(params[:24]); !errors.Is(err, egpu.EINVAL) ||
		!strings.Contains(err.Error(), "up to byte 28") {
		t.Fatalf("24 bytes: %v", err)
	}
}
