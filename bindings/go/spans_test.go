// SPDX-License-Identifier: MIT

package egpu_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"testing"
	"time"

	"libegpu.dev/egpu"
)

// The span file the C and Python decoders are checked against too
// (tests/events/data/make_spans.py): every lane access as spans.txt says.
func TestDecodeSharedSpanFile(t *testing.T) {
	chunk, err := egpu.ReadRecordFile("../../tests/events/data/spans.rec")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../../tests/events/data/spans.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := bufio.NewScanner(f)
	want.Scan() // the legend
	spans := 0
	err = egpu.ChunkRecords(chunk, func(rec egpu.ChunkRecord) error {
		if rec.Flags&egpu.RecSpan == 0 {
			return fmt.Errorf("flags %#x: no span", rec.Flags)
		}
		spans++
		info, accs, err := egpu.DecodeSpan(rec.Data)
		if err != nil {
			return err
		}
		for _, a := range accs {
			m := a.Mask
			for _, addr := range a.Addrs {
				lane := bits.TrailingZeros32(m)
				m &= m - 1
				got := fmt.Sprintf("%d %d %d %d %d %d %d %d", addr, a.Site, a.Size, a.Kind,
					lane, info.Block, info.Warp, info.SMID)
				if !want.Scan() || want.Text() != got {
					return fmt.Errorf("got %q, want %q", got, want.Text())
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if spans != 3 || want.Scan() {
		t.Fatalf("%d spans, lines left: %v", spans, want.Text())
	}
	// The slots over the same bytes: the first record is affine, stride 4.
	var first []byte
	egpu.ChunkRecords(chunk, func(rec egpu.ChunkRecord) error {
		if first == nil {
			first = rec.Data
		}
		return nil
	})
	slots, err := egpu.SpanSlots(first)
	if err != nil || slots[0].Mask != 0xffffffff || slots[0].Stride() != 4 ||
		slots[0].Site() != 9 || slots[0].Size() != 4 || slots[0].Format() != 1 {
		t.Fatalf("slots %+v, %v", slots, err)
	}
	if _, _, err := egpu.DecodeSpan(first[:20]); !errors.Is(err, egpu.EFORMAT) {
		t.Fatalf("20 bytes: %v", err)
	}
	if err := egpu.ChunkRecords(chunk[:len(chunk)-8], func(egpu.ChunkRecord) error { return nil }); !errors.Is(err, egpu.EFORMAT) {
		t.Fatalf("cut short: %v", err)
	}
}

// Spans the CPU back end makes (one lane each), received as chunks and
// decoded in place.
func TestRingBufferChunksOfSpans(t *testing.T) {
	_, obj := loadEvents(t)
	rb, err := mustMap(t, obj, "events").RingBufferChunks()
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	p, err := obj.Program("span_one")
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{0x7f0000001230, 0x7f0000001238, 1 << 60}
	for _, addr := range want {
		mem := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 0), addr)
		if _, err := p.Run(mem, egpu.CPU); err != nil {
			t.Fatal(err)
		}
	}
	var got []uint64
	for len(got) < len(want) {
		var chunk []byte
		select {
		case chunk = <-rb.Records():
		case <-time.After(time.Second):
			t.Fatalf("%d of %d accesses after a second", len(got), len(want))
		}
		err := egpu.ChunkRecords(chunk, func(rec egpu.ChunkRecord) error {
			_, accs, err := egpu.DecodeSpan(rec.Data)
			for _, a := range accs {
				got = append(got, a.Addrs...)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("addresses %x, want %x", got, want)
	}
}
