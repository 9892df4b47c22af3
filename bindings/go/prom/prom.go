// SPDX-License-Identifier: MIT

// Package prom serves libegpu maps through client_golang: a
// prometheus.Collector over an egpu.Metrics set.
//
//	m, _ := ctx.NewMetrics(&egpu.MetricsOptions{TopN: 20, Labels: map[string]string{"team": "ml"}})
//	m.AddMap(launches, &egpu.MetricDesc{Kind: egpu.MetricCounter, Key: egpu.KeyKernel})
//	m.AddMap(latHist, nil)        // kind and key from the map
//	m.AddKernels(report)          // kernel="name" labels from Instrument's report
//	prometheus.MustRegister(prom.NewCollector(m))
//	http.Handle("/metrics", promhttp.Handler())
//
// Each scrape renders the set with libegpu's own mapping (docs/fleet.md),
// the series `egpu attach --metrics` serves, and client_golang's text
// parser (expfmt) turns them into the metrics this collector sends: the
// mapping lives in C only. It is a separate module so that package egpu
// keeps no dependency on client_golang.
package prom

import (
	"math"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"libegpu.dev/egpu"
)

// Collector is a prometheus.Collector of an egpu.Metrics set. It is
// unchecked (Describe sends nothing): which series exist depends on the
// maps' contents at each scrape. Unregister it before closing the set or
// its context.
type Collector struct {
	metrics *egpu.Metrics
}

// NewCollector collects @m, which stays the caller's to close.
func NewCollector(m *egpu.Metrics) *Collector { return &Collector{metrics: m} }

// Describe sends no descriptors: the collector is unchecked.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// errDesc names the failure of a scrape in the registry's error.
var errDesc = prometheus.NewDesc("egpu_metrics", "libegpu maps as metrics", nil, nil)

// Collect renders the maps now and sends their series; a failure (a
// closed set, a map that could not be read) is sent as an invalid metric,
// which makes the registry's Gather (and promhttp) report it.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	text, err := c.metrics.Render()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(errDesc, err)
		return
	}
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		ch <- prometheus.NewInvalidMetric(errDesc, err)
		return
	}
	for _, f := range families {
		for _, m := range f.Metric {
			ch <- constMetric(f, m)
		}
	}
}

// constMetric is series @m of family @f as client_golang's const metric.
func constMetric(f *dto.MetricFamily, m *dto.Metric) prometheus.Metric {
	names := make([]string, len(m.Label))
	values := make([]string, len(m.Label))
	for i, l := range m.Label {
		names[i], values[i] = l.GetName(), l.GetValue()
	}
	desc := prometheus.NewDesc(f.GetName(), f.GetHelp(), names, nil)
	var metric prometheus.Metric
	var err error
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		metric, err = prometheus.NewConstMetric(desc, prometheus.CounterValue, m.Counter.GetValue(), values...)
	case dto.MetricType_GAUGE:
		metric, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, m.Gauge.GetValue(), values...)
	case dto.MetricType_HISTOGRAM:
		metric, err = constHistogram(desc, m.Histogram, values)
	default: // libegpu writes no other type
		metric, err = prometheus.NewConstMetric(desc, prometheus.UntypedValue, m.Untyped.GetValue(), values...)
	}
	if err != nil {
		return prometheus.NewInvalidMetric(desc, err)
	}
	return metric
}

// constHistogram: the buckets below +Inf (the count stands for it). A
// log2 histogram has no sum: 0, which client_golang's text writes as
// "_sum 0".
func constHistogram(desc *prometheus.Desc, h *dto.Histogram, values []string) (prometheus.Metric, error) {
	buckets := make(map[float64]uint64, len(h.Bucket))
	for _, b := range h.Bucket {
		if le := b.GetUpperBound(); !math.IsInf(le, 1) {
			buckets[le] = b.GetCumulativeCount()
		}
	}
	return prometheus.NewConstHistogram(desc, h.GetSampleCount(), h.GetSampleSum(), buckets, values...)
}
