// SPDX-License-Identifier: MIT

package egpu_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"libegpu.dev/egpu"
	"libegpu.dev/egpu/internal/fleettest"
)

// The fleet fixture's launches as text: the series the C exporter serves
// (their values are checked in full by package prom's tests and C's).
func TestMetricsRender(t *testing.T) {
	ctx, obj := fleettest.Open(t)
	m, err := ctx.NewMetrics(&egpu.MetricsOptions{TopN: 3, Labels: map[string]string{"team": "ml"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddMap(mustMap(t, obj, "launches"), &egpu.MetricDesc{Kind: egpu.MetricCounter, Key: egpu.KeyKernel}); err != nil {
		t.Fatal(err)
	}
	for _, mp := range obj.Maps() { // AUTO for the rest: the ring and .bss skipped
		if mp.Name() != "launches" {
			if err := m.AddMap(mp, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := m.NameKernels(fleettest.Kernels); err != nil {
		t.Fatal(err)
	}
	text, err := m.Render()
	if err != nil {
		t.Fatal(err)
	}
	common := fmt.Sprintf(`pid="%d",team="ml"`, os.Getpid())
	for _, line := range []string{
		"# TYPE egpu_launches_total counter\n",
		`egpu_launches_total{kernel="vec_add",` + common + "} 5\n",
		`egpu_launches_total{kernel="other",` + common + "} 2\n",
		"# TYPE egpu_lat_hist histogram\n",
		`egpu_lat_hist_bucket{le="127",` + common + "} 9\n",
		`egpu_kernel_lat_hist_count{kernel="other",` + common + "} 2\n",
		"egpu_threads_total{" + common + "} 3072\n",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("no line %q in:\n%s", line, text)
		}
	}
	if strings.Contains(text, "events") || strings.Contains(text, "runs") {
		t.Errorf("a ring or global data exported:\n%s", text)
	}
}

// A report from Instrument names the kernels as egpu_metrics_add_kernels
// does: the demangled name when there is one.
func TestMetricsAddKernels(t *testing.T) {
	ctx, obj := fleettest.Open(t)
	m, err := ctx.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	desc := &egpu.MetricDesc{Name: "launches", Kind: egpu.MetricGauge, Key: egpu.KeyKernel}
	if err := m.AddMap(mustMap(t, obj, "launches"), desc); err != nil {
		t.Fatal(err)
	}
	err = m.AddKernels(egpu.Report{Kernels: []egpu.KernelReport{
		{Name: "_Z6matmulIfEvv", Demangled: "void matmul<float>()", KernelID: 1},
		{Name: "vec_add", KernelID: 0},
	}})
	if err != nil {
		t.Fatal(err)
	}
	text, err := m.Render()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`kernel="void matmul<float>()"`, `kernel="vec_add"`, `kernel="kernel_2"`} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s in:\n%s", want, text)
		}
	}
}

func TestMetricsRefusals(t *testing.T) {
	ctx, obj := fleettest.Open(t)
	if _, err := ctx.NewMetrics(&egpu.MetricsOptions{Labels: map[string]string{"job": "x"}}); !errors.Is(err, egpu.EINVAL) || !strings.Contains(err.Error(), "job") {
		t.Errorf("label job: %v", err)
	}
	m, err := ctx.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	events := mustMap(t, obj, "events")
	if err := m.AddMap(events, &egpu.MetricDesc{Kind: egpu.MetricCounter}); !errors.Is(err, egpu.EINVAL) || !strings.Contains(err.Error(), "ring buffer") {
		t.Errorf("a ring as a counter: %v", err)
	}
	if err := m.AddMap(events, &egpu.MetricDesc{Kind: 9}); !errors.Is(err, egpu.EINVAL) {
		t.Errorf("kind 9: %v", err)
	}
	if err := m.AddMap(mustMap(t, obj, "launches"), nil); err != nil {
		t.Fatal(err)
	}
	obj.Close() // its map is exported: rendering now would read freed memory
	if _, err := m.Render(); !errors.Is(err, egpu.EINVAL) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("render after the object closed: %v", err)
	}
	ctx.Close() // closes the metrics too
	if _, err := m.Render(); !errors.Is(err, egpu.EINVAL) {
		t.Errorf("render after the context closed: %v", err)
	}
	m.Close()
}
