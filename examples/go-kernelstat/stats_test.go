// SPDX-License-Identifier: MIT

package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"libegpu.dev/egpu"
)

// statsMap is the probe's stats map in an offline context, where maps
// live on the host and the tool's reads can be checked without a GPU.
func statsMap(t *testing.T) *egpu.Map {
	probe := os.Getenv("KERNELSTAT_PROBE")
	if probe == "" {
		t.Fatal("KERNELSTAT_PROBE is not set: run the tests through ctest")
	}
	ctx, err := egpu.NewContext(&egpu.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctx.Close)
	obj, err := ctx.Load(probe)
	if err != nil {
		t.Fatal(err)
	}
	m, err := obj.Map("stats")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func store(t *testing.T, m *egpu.Map, id uint32, words ...uint64) {
	value := make([]byte, kernelStatsSize)
	for i, w := range words {
		binary.LittleEndian.PutUint64(value[8*i:], w)
	}
	if err := m.Update(binary.LittleEndian.AppendUint32(nil, id), value, egpu.Any); err != nil {
		t.Fatal(err)
	}
}

func TestReadStatsDecodesTheProbesStruct(t *testing.T) {
	m := statsMap(t)
	if m.ValueSize() != kernelStatsSize {
		t.Fatalf("struct kernel_stats has %d bytes, the tool reads %d", m.ValueSize(), kernelStatsSize)
	}
	// launches, entries, exits, total_ns, max_ns, then the launch in flight
	store(t, m, 3, 4, 4096, 4096, 40000, 12000, 777, 5, 1)
	s, err := readStats(m, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := (kernelStats{4, 4096, 4096, 40000, 12000}); s != want {
		t.Fatalf("read %+v, want %+v", s, want)
	}
	if s.avgMicros() != 10 {
		t.Fatalf("average %v us, want 10", s.avgMicros())
	}
	if _, err := readStats(m, 64); err == nil {
		t.Fatal("kernel id 64 is beyond the map, yet read")
	}
}

func TestRefreshTracksCountsAndRates(t *testing.T) {
	m := &monitor{stats: statsMap(t), rows: []row{{name: "a", id: 0}, {name: "b", id: 1}},
		made: make([]atomic.Uint64, 2), last: time.Now().Add(-2 * time.Second)}
	store(t, m.stats, 1, 2, 512, 512, 2000, 1500)
	m.made[1].Add(3)
	if err := m.refresh(); err != nil {
		t.Fatal(err)
	}
	if r := m.rows[1]; r.made != 3 || r.stats.launches != 2 || r.rate <= 0 {
		t.Fatalf("row b after a refresh: %+v", r)
	}
	if r := m.rows[0]; r.stats != (kernelStats{}) || r.rate != 0 {
		t.Fatalf("row a, never launched: %+v", r)
	}
	var out bytes.Buffer
	printTable(&out, "header", m.rows)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "KERNEL") ||
		!strings.Contains(lines[3], " 3 ") || !strings.Contains(lines[3], "1.0 ") {
		t.Fatalf("table:\n%s", out.String())
	}
}

func TestCheckRows(t *testing.T) {
	good := kernelStats{launches: 2, entries: 200, exits: 200, totalNs: 30, maxNs: 20}
	cases := []struct {
		stats kernelStats
		bad   string
	}{
		{good, ""},
		{kernelStats{launches: 1, entries: 100, exits: 100, totalNs: 9, maxNs: 9}, "1 launches counted, 2 made"},
		{kernelStats{launches: 2, entries: 199, exits: 200, totalNs: 30, maxNs: 20}, "199 entries and 200 exits, expected 200"},
		{kernelStats{launches: 2, entries: 200, exits: 200, totalNs: 30, maxNs: 0}, "durations inconsistent"},
		{kernelStats{launches: 2, entries: 200, exits: 200, totalNs: 50, maxNs: 20}, "durations inconsistent"},
	}
	for _, c := range cases {
		bad := checkRows([]row{{name: "k", made: 2, stats: c.stats}}, 100)
		switch {
		case c.bad == "" && len(bad) != 0:
			t.Errorf("%+v: unexpected %v", c.stats, bad)
		case c.bad != "" && (len(bad) != 1 || !strings.Contains(bad[0], c.bad)):
			t.Errorf("%+v: got %v, want %q", c.stats, bad, c.bad)
		}
	}
}
