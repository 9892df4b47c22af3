# SPDX-License-Identifier: MIT
"""egpu.prometheus.Collector: maps of tests/export/fleet.bpf.c, filled by
runs on the CPU, collected through prometheus_client's registry and read
back with its own text parser (the launches and expected values are those
of tests/export/fleet_fixture.c)."""

import os
import struct

import pytest

import egpu

prometheus_client = pytest.importorskip("prometheus_client")
import egpu.prometheus  # noqa: E402  (needs prometheus_client)
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

PLAN = [(0, 5, 100), (1, 3, 3000), (2, 2, 1), (3, 1, 20), (4, 1, 5)]


@pytest.fixture
def fleet():
    with egpu.Context() as ctx:
        obj = ctx.load(os.environ["EGPU_TEST_FLEET"])
        for kernel, launches, ns in PLAN:
            for _ in range(launches):
                obj.programs["launch"].run(struct.pack("<III", kernel, ns, 256))
        yield ctx, obj


def scrape(col):
    reg = prometheus_client.CollectorRegistry()
    reg.register(col)
    text = prometheus_client.generate_latest(reg).decode()
    return {f.name: f for f in text_string_to_metric_families(text)}


def test_collector_series(fleet):
    ctx, obj = fleet
    col = egpu.prometheus.Collector(ctx, top_n=3, labels={"team": "ml"})
    col.add(obj.maps["launches"], kind="counter", key="kernel")
    col.add(obj.maps["lat_hist"]).add(obj.maps["threads"])
    col.add(obj.maps["events"])  # a ring: AUTO skips it
    col.name_kernels({0: "vec_add", 1: "matmul<float>", 2: 'odd"k\\',
                      3: "tiny"})
    fams = scrape(col)
    assert set(fams) == {"egpu_launches", "egpu_lat_hist", "egpu_threads"}
    launches = {s.labels["kernel"]: s.value
                for s in fams["egpu_launches"].samples}
    assert launches == {"vec_add": 5, "matmul<float>": 3, 'odd"k\\': 2,
                        "other": 2}
    for s in fams["egpu_launches"].samples:
        assert s.labels["team"] == "ml" and s.labels["pid"] == str(os.getpid())
    assert fams["egpu_lat_hist"].type == "histogram"
    buckets = {s.labels["le"]: s.value for s in fams["egpu_lat_hist"].samples
               if s.name == "egpu_lat_hist_bucket"}
    assert buckets["127"] == 9 and buckets["+Inf"] == 12
    assert [s.value for s in fams["egpu_threads"].samples] == [3072]
    col.close()
    col.close()


def test_collector_refuses(fleet):
    ctx, obj = fleet
    col = egpu.prometheus.Collector(ctx)
    with pytest.raises(egpu.InvalidArgument):
        col.add(obj.maps["launches"], kind="summary")
    with pytest.raises(egpu.InvalidArgument, match="ring buffer"):
        col.add(obj.maps["events"], kind="counter")
    with pytest.raises(egpu.InvalidArgument, match="job=x"):
        egpu.prometheus.Collector(ctx, labels={"job": "x"})
