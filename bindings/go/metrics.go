// SPDX-License-Identifier: MIT

package egpu

import (
	"sort"
	"strings"

	"libegpu.dev/egpu/internal/capi"
)

// MetricKind is how a map's values become Prometheus metrics
// (enum egpu_metric_kind; docs/fleet.md).
type MetricKind int

const (
	MetricAuto      MetricKind = 0 // from the map: skip, histogram ("...hist") or counter
	MetricCounter   MetricKind = 1 // each key's value, only growing
	MetricGauge     MetricKind = 2 // each key's value, up or down
	MetricHistogram MetricKind = 3 // log2 buckets: key b counts [2^b, 2^(b+1))
	MetricSkip      MetricKind = 4 // not exported
)

// MetricKey is what a map's key becomes (enum egpu_metric_key).
type MetricKey int

const (
	KeyAuto   MetricKey = 0 // none for one-entry maps and odd key sizes, else index
	KeyNone   MetricKey = 1 // every key's value summed into one series
	KeyIndex  MetricKey = 2 // label key="N"
	KeyKernel MetricKey = 3 // the key is a kernel id: label kernel="name"
)

// MetricDesc says how one map is exported; the zero value (or nil) lets
// the library decide from the map.
type MetricDesc struct {
	Name string // "": "egpu_" + the map's name (+ "_total" for a counter)
	Help string // "": names the map
	Kind MetricKind
	Key  MetricKey
	TopN uint32 // labelled series kept (the rest summed as "other"); 0: the set's
}

// MetricsOptions configure a Metrics set; nil gives the defaults.
type MetricsOptions struct {
	TopN   uint32            // labelled series per metric; 0: 20
	Labels map[string]string // added to every series, e.g. {"team": "ml"}
}

// Metrics is a set of maps exported as Prometheus metrics, read from the
// maps at each Render (copies that never wait for the application's
// kernels). Its methods are safe for concurrent use, so a scrape may
// render while the application adds maps; close it (or the context)
// before closing the objects whose maps it exports. Package
// libegpu.dev/egpu/prom serves it through client_golang.
type Metrics struct {
	ctx  *Context // its lock guards the set too
	h    capi.Struct_SS_egpu_metrics
	maps []*Map // exported: Render refuses once one's object is closed
}

// NewMetrics makes an empty set over the context's maps; add them with
// AddMap.
func (c *Context) NewMetrics(opts *MetricsOptions) (*Metrics, error) {
	defer c.lock()()
	if err := c.live(); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &MetricsOptions{}
	}
	h, err := handle(EUNKNOWN, func() capi.Struct_SS_egpu_metrics {
		return capi.Metrics_new(c.h, uint(opts.TopN), labelsText(opts.Labels))
	})
	if err != nil {
		return nil, err
	}
	m := &Metrics{ctx: c, h: h}
	c.metrics = append(c.metrics, m)
	return m, nil
}

// labelsText is "k=v,..." in key order, as egpu_metrics_opts.labels wants
// (the library checks the names and values).
func labelsText(labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

// live is called with the context's lock held.
func (m *Metrics) live() error {
	if m.h == nil {
		return newError(EINVAL, "egpu: the metrics are closed")
	}
	for _, mp := range m.maps {
		if err := mp.obj.live(); err != nil {
			return err
		}
	}
	return nil
}

// AddMap exports map @mp as @desc says (nil: decided from the map, which
// skips rings and global data without an error).
func (m *Metrics) AddMap(mp *Map, desc *MetricDesc) error {
	defer m.ctx.lock()()
	if err := m.live(); err != nil {
		return err
	}
	if err := mp.obj.live(); err != nil {
		return err
	}
	if desc == nil {
		desc = &MetricDesc{}
	}
	_, err := call(func() int {
		return capi.Metrics_add_map(m.h, mp.h, int(desc.Kind), int(desc.Key),
			desc.Name, desc.Help, uint(desc.TopN))
	})
	if err == nil {
		m.maps = append(m.maps, mp)
	}
	return err
}

// AddKernels names the kernel ids of an instrumentation (Instrument's
// report) for kernel="..." labels; ids never named read "kernel_ID".
func (m *Metrics) AddKernels(r Report) error {
	for _, k := range r.Kernels {
		if err := m.nameKernel(k.KernelID, k.Name, k.Demangled); err != nil {
			return err
		}
	}
	return nil
}

// NameKernels names kernel ids directly: {id: name}.
func (m *Metrics) NameKernels(names map[uint32]string) error {
	for id, name := range names {
		if err := m.nameKernel(id, name, ""); err != nil {
			return err
		}
	}
	return nil
}

func (m *Metrics) nameKernel(id uint32, name, demangled string) error {
	defer m.ctx.lock()()
	if err := m.live(); err != nil {
		return err
	}
	_, err := call(func() int { return capi.Metrics_name_kernel(m.h, uint(id), name, demangled) })
	return err
}

// Render reads the maps and returns the Prometheus text exposition a
// scrape of `egpu attach --metrics` would get.
func (m *Metrics) Render() (string, error) {
	defer m.ctx.lock()()
	if err := m.live(); err != nil {
		return "", err
	}
	var text string
	_, err := call(func() int { return capi.Egpu_metrics_render(m.h, &text) })
	return text, err
}

// Close frees the set; closing its context closes it too. A second Close
// does nothing.
func (m *Metrics) Close() {
	defer m.ctx.lock()()
	m.closeLocked()
}

// closeLocked is Close with the context's lock held (Context.Close).
func (m *Metrics) closeLocked() {
	if m.h == nil {
		return
	}
	m.ctx.metrics = without(m.ctx.metrics, m)
	capi.Egpu_metrics_free(m.h)
	m.h = nil
	m.maps = nil
}
