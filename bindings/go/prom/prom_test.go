// SPDX-License-Identifier: MIT

package prom_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"libegpu.dev/egpu"
	"libegpu.dev/egpu/internal/fleettest"
	"libegpu.dev/egpu/prom"
)

// fleetRegistry: the fixture's maps exported as metrics_app exports them
// (tests/export/fleet_fixture.h: FLEET_SPEC, FLEET_LABELS, FLEET_TOP),
// collected by a pedantic registry.
func fleetRegistry(t *testing.T) (*prometheus.Registry, *egpu.Metrics) {
	t.Helper()
	ctx, obj := fleettest.Open(t)
	m, err := ctx.NewMetrics(&egpu.MetricsOptions{TopN: 3, Labels: map[string]string{"team": "ml"}})
	if err != nil {
		t.Fatal(err)
	}
	descs := map[string]*egpu.MetricDesc{
		"launches":        {Kind: egpu.MetricCounter, Key: egpu.KeyKernel},
		"kernel_lat_hist": {Kind: egpu.MetricHistogram, Key: egpu.KeyKernel},
	}
	for _, mp := range obj.Maps() { // the others AUTO: the ring and .bss skipped
		if err := m.AddMap(mp, descs[mp.Name()]); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.NameKernels(fleettest.Kernels); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(prom.NewCollector(m))
	return reg, m
}

// expected is the exposition of @metric's series, with the labels every
// series carries appended to @labels of each line.
func expected(help, typ, metric string, lines ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", metric, help, metric, typ)
	common := fmt.Sprintf(`pid="%d",team="ml"`, os.Getpid())
	for _, l := range lines {
		name, rest, _ := strings.Cut(l, " ")
		labels, value, _ := strings.Cut(rest, " ")
		if labels != "" {
			labels += ","
		}
		fmt.Fprintf(&b, "%s{%s%s} %s\n", name, labels, common, value)
	}
	return b.String()
}

var wantLaunches = expected("libegpu map launches (array)", "counter", "egpu_launches_total",
	`egpu_launches_total kernel="vec_add" 5`,
	`egpu_launches_total kernel="matmul<float>" 3`,
	`egpu_launches_total kernel="odd\"k\\" 2`,
	`egpu_launches_total kernel="other" 2`)

var wantThreads = expected("libegpu map threads (percpu_array)", "counter", "egpu_threads_total",
	"egpu_threads_total  3072")

// The log2 histogram: client_golang writes "_sum 0" (libegpu's has no
// sum) and every bucket up to the highest any series uses.
var wantLatHist = expected("libegpu map lat_hist (array)", "histogram", "egpu_lat_hist",
	`egpu_lat_hist_bucket le="1" 2`, `egpu_lat_hist_bucket le="3" 2`,
	`egpu_lat_hist_bucket le="7" 3`, `egpu_lat_hist_bucket le="15" 3`,
	`egpu_lat_hist_bucket le="31" 4`, `egpu_lat_hist_bucket le="63" 4`,
	`egpu_lat_hist_bucket le="127" 9`, `egpu_lat_hist_bucket le="255" 9`,
	`egpu_lat_hist_bucket le="511" 9`, `egpu_lat_hist_bucket le="1023" 9`,
	`egpu_lat_hist_bucket le="2047" 9`, `egpu_lat_hist_bucket le="4095" 12`,
	`egpu_lat_hist_bucket le="+Inf" 12`,
	"egpu_lat_hist_sum  0", "egpu_lat_hist_count  12")

func TestGatherSeries(t *testing.T) {
	reg, _ := fleetRegistry(t)
	want := wantLaunches + wantThreads + wantLatHist
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"egpu_launches_total", "egpu_threads_total", "egpu_lat_hist"); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	// sorted by the registry; no ring ("events"), no .bss ("runs")
	if got := strings.Join(names, " "); got != "egpu_kernel_lat_hist egpu_lat_hist egpu_launches_total egpu_threads_total" {
		t.Errorf("families %s", got)
	}
	// per kernel: top 3 by launches and the rest as "other"
	kernels := map[string]uint64{}
	for _, m := range families[0].Metric {
		kernels[label(m, "kernel")] = m.Histogram.GetSampleCount()
	}
	if want := map[string]uint64{"vec_add": 5, "matmul<float>": 3, `odd"k\`: 2, "other": 2}; fmt.Sprint(kernels) != fmt.Sprint(want) {
		t.Errorf("kernel_lat_hist counts %v, want %v", kernels, want)
	}
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Scraped over HTTP by promhttp, as text and as protobuf, and read back
// by expfmt.
func TestScrapeOverHTTP(t *testing.T) {
	reg, _ := fleetRegistry(t)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	if err := testutil.ScrapeAndCompare(srv.URL, strings.NewReader(wantLaunches+wantLatHist),
		"egpu_launches_total", "egpu_lat_hist"); err != nil {
		t.Fatal(err)
	}

	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Accept", string(expfmt.FmtProtoDelim))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if f := expfmt.ResponseFormat(resp.Header); f != expfmt.FmtProtoDelim {
		t.Fatalf("format %s", f)
	}
	dec := expfmt.NewDecoder(resp.Body, expfmt.FmtProtoDelim)
	for {
		var f dto.MetricFamily
		if err := dec.Decode(&f); err != nil {
			t.Fatalf("no egpu_kernel_lat_hist: %v", err)
		}
		if f.GetName() != "egpu_kernel_lat_hist" {
			continue
		}
		for _, m := range f.Metric {
			if label(m, "kernel") != "matmul<float>" {
				continue
			}
			// 3 launches of 3000 ns: all in bucket 11, le 4095
			got := map[float64]uint64{}
			for _, b := range m.Histogram.Bucket {
				got[b.GetUpperBound()] = b.GetCumulativeCount()
			}
			if got[2047] != 0 || got[4095] != 3 || m.Histogram.GetSampleCount() != 3 {
				t.Errorf("matmul buckets %v count %d", got, m.Histogram.GetSampleCount())
			}
			return
		}
		t.Fatalf("no matmul<float> series in %v", f.Metric)
	}
}

// A scrape after the set is closed fails in the registry with the reason;
// it does not crash.
func TestClosedMetricsFailTheScrape(t *testing.T) {
	reg, m := fleetRegistry(t)
	m.Close()
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("gather of closed metrics: %v", err)
	}
}
