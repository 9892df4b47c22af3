// SPDX-License-Identifier: MIT

package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"libegpu.dev/egpu"
)

// kernelStats is struct kernel_stats of kernelstat.bpf.c: eight
// little-endian uint64 fields, the last three the launch in flight.
type kernelStats struct {
	launches, entries, exits, totalNs, maxNs uint64
}

const kernelStatsSize = 8 * 8

func readStats(m *egpu.Map, id uint32) (kernelStats, error) {
	raw, err := m.Lookup(binary.LittleEndian.AppendUint32(nil, id))
	if err != nil {
		return kernelStats{}, err
	}
	if len(raw) != kernelStatsSize {
		return kernelStats{}, fmt.Errorf("map %s: values of %d bytes, expected %d", m.Name(), len(raw), kernelStatsSize)
	}
	word := func(i int) uint64 { return binary.LittleEndian.Uint64(raw[8*i:]) }
	return kernelStats{launches: word(0), entries: word(1), exits: word(2), totalNs: word(3), maxNs: word(4)}, nil
}

func (s kernelStats) avgMicros() float64 {
	if s.launches == 0 {
		return 0
	}
	return float64(s.totalNs) / float64(s.launches) / 1e3
}

// row is one kernel of the table: its name, its id in the probes' ctx,
// the launches the host made, and what the probes counted.
type row struct {
	name  string
	id    uint32
	made  uint64
	stats kernelStats
	rate  float64 // launches per second since the previous table
}

func printTable(w io.Writer, header string, rows []row) {
	fmt.Fprintln(w, header)
	fmt.Fprintf(w, "%-32s %9s %9s %9s %12s %10s %10s\n", "KERNEL", "LAUNCHED", "LAUNCHES", "LAUNCH/S", "THREADS", "AVG us", "MAX us")
	for _, r := range rows {
		fmt.Fprintf(w, "%-32s %9d %9d %9.1f %12d %10.1f %10.1f\n", shorten(r.name, 32), r.made, r.stats.launches, r.rate,
			r.stats.entries, r.stats.avgMicros(), float64(r.stats.maxNs)/1e3)
	}
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// checkRows says what is wrong with the final counts: every launch made
// must have completed on the device with every thread entering and leaving
// once, and taken some time.
func checkRows(rows []row, threadsPerLaunch uint64) []string {
	var bad []string
	for _, r := range rows {
		s, want := r.stats, r.made*threadsPerLaunch
		switch {
		case s.launches != r.made:
			bad = append(bad, fmt.Sprintf("%s: %d launches counted, %d made", r.name, s.launches, r.made))
		case s.entries != want || s.exits != want:
			bad = append(bad, fmt.Sprintf("%s: %d entries and %d exits, expected %d", r.name, s.entries, s.exits, want))
		case s.launches > 0 && (s.maxNs == 0 || s.maxNs*s.launches < s.totalNs):
			bad = append(bad, fmt.Sprintf("%s: durations inconsistent (total %d ns, max %d ns)", r.name, s.totalNs, s.maxNs))
		}
	}
	return bad
}

func header(elapsed time.Duration, grid, block, n int) string {
	return fmt.Sprintf("kernelstat  %.1f s  grid %d x block %d  %d elements", elapsed.Seconds(), grid, block, n)
}

// clearScreen moves a terminal's cursor home and clears it, as top does.
const clearScreen = "\x1b[H\x1b[2J"
