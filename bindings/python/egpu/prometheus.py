# SPDX-License-Identifier: MIT
"""Maps as Prometheus metrics through prometheus_client.

    from prometheus_client import REGISTRY, start_http_server
    import egpu.prometheus

    col = egpu.prometheus.Collector(ctx, top_n=20, labels={"team": "ml"})
    col.add(obj.maps["launches"], kind="counter", key="kernel")
    col.add(obj.maps["lat_hist"])            # kind and key from the map
    col.name_kernels({0: "vec_add", 1: "matmul"})
    REGISTRY.register(col)
    start_http_server(9464)

Each scrape reads the maps (copies that never wait for the application's
kernels) and renders them with libegpu's own mapping (docs/fleet.md), the
same series `egpu attach --metrics` serves; prometheus_client's parser
turns that text into the metric families this collector yields.
"""

from prometheus_client.parser import text_string_to_metric_families

from . import _egpu as _c
from ._errors import InvalidArgument

_KINDS = {None: 0, "counter": 1, "gauge": 2, "histogram": 3, "skip": 4}
_KEYS = {None: 0, "none": 1, "index": 2, "kernel": 3}


class Collector:
    """A prometheus_client collector of libegpu maps of context ``ctx``.
    ``top_n``: labelled series kept per metric (the rest summed into
    "other"; 0: the library's 20); ``labels``: added to every series."""

    _h = None

    def __init__(self, ctx, top_n=0, labels=None):
        text = ",".join(f"{k}={v}" for k, v in (labels or {}).items())
        self._ctx = ctx
        self._maps = []  # keeps the maps' objects alive
        self._h = _c.metrics_new(ctx._live(), top_n, text or None)

    def add(self, m, kind=None, key=None, name=None, help=None, top_n=0):
        """Export map ``m``: ``kind`` "counter", "gauge", "histogram" or
        "skip", ``key`` "none", "index" or "kernel" (None: from the map);
        ``name`` replaces "egpu_" + the map's name."""
        if kind not in _KINDS or key not in _KEYS:
            raise InvalidArgument(f"kind {kind!r} or key {key!r}: expected "
                                  f"{list(_KINDS)[1:]} and {list(_KEYS)[1:]}")
        _c.metrics_add_map(self._live(), m._handle(), _KINDS[kind], _KEYS[key],
                           name, help, top_n)
        self._maps.append(m)
        return self

    def name_kernels(self, names):
        """Label kernel ids by name: ``{id: name}``."""
        for i, n in names.items():
            _c.metrics_name_kernel(self._live(), i, n)

    def render(self):
        """The Prometheus text exposition a scrape gets now."""
        return _c.egpu_metrics_render(self._live())

    def collect(self):
        yield from text_string_to_metric_families(self.render())

    def _live(self):
        if self._h is None:
            raise InvalidArgument("the collector is closed")
        return self._h

    def close(self):
        """Free the collector (before its maps' context). Idempotent."""
        if self._h is not None:
            _c.egpu_metrics_free(self._h)
            self._h = None

    def __del__(self):
        self.close()
