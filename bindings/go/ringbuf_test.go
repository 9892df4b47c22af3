// SPDX-License-Identifier: MIT

package egpu_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"libegpu.dev/egpu"
)

// loadEvents opens an offline context with ../python/tests/events.bpf.o.
func loadEvents(t *testing.T) (*egpu.Context, *egpu.Obj) {
	t.Helper()
	return loadIn(t, &egpu.Options{Offline: true}, "EGPU_TEST_EVENTS")
}

// emit runs @prog on the CPU: @n records {seq, tag, seq*seq, pad}.
func emit(t *testing.T, obj *egpu.Obj, prog string, n, tag uint64) uint64 {
	t.Helper()
	p, err := obj.Program(prog)
	if err != nil {
		t.Fatal(err)
	}
	mem := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, n), tag)
	sent, err := p.Run(mem, egpu.CPU)
	if err != nil {
		t.Fatal(err)
	}
	return sent
}

// receive takes @n records from @rb, failing after a second without one.
func receive(t *testing.T, rb *egpu.RingBuffer, n int) [][]byte {
	t.Helper()
	var got [][]byte
	for len(got) < n {
		select {
		case rec, ok := <-rb.Records():
			if !ok {
				t.Fatalf("records closed after %d of %d: %v", len(got), n, rb.Err())
			}
			got = append(got, rec)
		case <-time.After(time.Second):
			t.Fatalf("%d of %d records after a second", len(got), n)
		}
	}
	return got
}

func field(rec []byte, i int) uint64 { return binary.LittleEndian.Uint64(rec[8*i:]) }

func TestRingBufferRecords(t *testing.T) {
	_, obj := loadEvents(t)
	rb, err := mustMap(t, obj, "events").RingBuffer()
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	if sent := emit(t, obj, "emit_events", 10, 7); sent != 10 {
		t.Fatalf("sent %d", sent)
	}
	for i, rec := range receive(t, rb, 10) {
		if len(rec) != 56 || field(rec, 0) != uint64(i) || field(rec, 1) != 7 ||
			field(rec, 2) != uint64(i*i) {
			t.Fatalf("record %d: % x", i, rec)
		}
	}
	// Records written later, while the goroutine waits, arrive too.
	emit(t, obj, "emit_events", 2, 8)
	if recs := receive(t, rb, 2); field(recs[1], 0) != 1 || field(recs[1], 1) != 8 {
		t.Fatalf("late records % x", recs)
	}
	if rb.Drops() != 0 {
		t.Fatalf("drops %d", rb.Drops())
	}
}

func TestRingBufferDropsAndClose(t *testing.T) {
	_, obj := loadEvents(t)
	tiny := mustMap(t, obj, "tiny")
	rb, err := tiny.RingBuffer()
	if err != nil {
		t.Fatal(err)
	}
	if sent := emit(t, obj, "emit_tiny", 80, 3); sent != 64 {
		t.Fatalf("sent %d into a ring of 64", sent)
	}
	receive(t, rb, 64)
	if rb.Drops() != 16 {
		t.Fatalf("drops %d, want 16", rb.Drops())
	}
	rb.Close()
	rb.Close()
	if _, ok := <-rb.Records(); ok {
		t.Fatal("records still open after Close")
	}
	if rb.Err() != nil {
		t.Fatalf("err after Close: %v", rb.Err())
	}
	again, err := tiny.RingBuffer() // the map is free again
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
}

func TestRingBufferErrors(t *testing.T) {
	ctx, obj := loadEvents(t)
	_, err := mustMap(t, obj, "plain").RingBuffer()
	var e *egpu.Error
	if !errors.As(err, &e) || e.Code != egpu.EINVAL || !strings.Contains(e.Msg, "not a ring buffer") {
		t.Fatalf("ring buffer of an array: %v", err)
	}
	events := mustMap(t, obj, "events")
	rb, err := events.RingBuffer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.RingBuffer(); !errors.Is(err, egpu.EINVAL) {
		t.Fatalf("second consumer: %v", err)
	}
	// Closing the context closes the consumer first.
	ctx.Close()
	if _, ok := <-rb.Records(); ok {
		t.Fatal("records still open after the context closed")
	}
	if _, err := events.RingBuffer(); !errors.Is(err, egpu.EINVAL) {
		t.Fatalf("ring buffer of a closed object: %v", err)
	}
}
