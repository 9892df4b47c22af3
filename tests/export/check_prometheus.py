#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A real Prometheus server scrapes libegpu's /metrics.

check_prometheus.py PROMETHEUS METRICS_APP FLEET_OBJ WORKDIR

Starts metrics_app (the fleet fixture's CPU-filled maps, served on a free
loopback port), then Prometheus on another loopback port with a 1 s scrape
interval pointing at it, waits for the first scrape, and checks through
Prometheus's HTTP query API the series it stored: values and labels (the
expected numbers are derived in fleet_fixture.c). Everything runs on
127.0.0.1 and is stopped at the end; the test gives up after 60 s.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

DEADLINE = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(prom_port, expr):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (
        prom_port, urllib.parse.urlencode({"query": expr}))
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]["result"]


def wait_for(prom_port, expr, until):
    while time.monotonic() < until:
        try:
            res = query(prom_port, expr)
            if res:
                return res
        except OSError:
            pass
        time.sleep(0.3)
    sys.exit("no result for %s within %d s" % (expr, DEADLINE))


def check(prom_port, app_port, until):
    up = wait_for(prom_port, 'up{job="egpu"} == 1', until)
    assert up[0]["metric"]["instance"] == "127.0.0.1:%d" % app_port, up
    res = wait_for(prom_port, "egpu_launches_total", until)
    by_kernel = {r["metric"]["kernel"]: float(r["value"][1]) for r in res}
    assert by_kernel == {"vec_add": 5, "matmul<float>": 3, 'odd"k\\': 2,
                         "other": 2}, by_kernel
    for r in res:
        m = r["metric"]
        assert m["job"] == "egpu" and m["team"] == "ml", m
        assert m["pid"].isdigit() and "gpu" not in m, m
    res = query(prom_port, "egpu_threads_total")
    assert [float(r["value"][1]) for r in res] == [3072], res
    res = query(prom_port, 'egpu_lat_hist_bucket{le="127"}')
    assert [float(r["value"][1]) for r in res] == [9], res
    # a quantile from the buckets: half of 12 launches lie at or below 127
    res = query(prom_port, "histogram_quantile(0.5, egpu_lat_hist_bucket)")
    q = float(res[0]["value"][1])
    assert 63 <= q <= 127, res
    res = query(prom_port, 'egpu_kernel_lat_hist_count{kernel="matmul<float>"}')
    assert [float(r["value"][1]) for r in res] == [3], res
    for absent in ("egpu_events_total", "egpu_runs_total"):
        assert not query(prom_port, absent), absent


def main():
    prometheus, app, obj, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    until = time.monotonic() + DEADLINE
    app_port, prom_port = free_port(), free_port()
    served = subprocess.Popen([app, obj, "127.0.0.1:%d" % app_port],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    prom = None
    try:
        line = served.stdout.readline()
        assert line == "port %d\n" % app_port, line
        config = os.path.join(work, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n"
                    "scrape_configs:\n  - job_name: egpu\n"
                    "    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % app_port)
        log = open(os.path.join(work, "prometheus.log"), "w")
        prom = subprocess.Popen(
            [prometheus, "--config.file=" + config,
             "--storage.tsdb.path=" + os.path.join(work, "data"),
             "--web.listen-address=127.0.0.1:%d" % prom_port],
            stdout=log, stderr=subprocess.STDOUT)
        check(prom_port, app_port, until)
    finally:
        if prom:
            prom.terminate()
            prom.wait(timeout=20)
        served.stdin.close()
        served.wait(timeout=10)
    print("prometheus scraped libegpu: series, values and labels as expected")


if __name__ == "__main__":
    main()
