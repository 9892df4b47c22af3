# SPDX-License-Identifier: MIT
"""egpu.Trace on a GPU: a trace around CuPy kernel launches joins each
launch to its kernel and writes every format. Skipped (by conftest.py)
where no GPU is usable; CuPy is imported inside."""

import gzip
import json
import xml.etree.ElementTree as ET

import pytest

import egpu

pytestmark = pytest.mark.gpu

LAUNCHES = 5
SOURCE = r"""
extern "C" __global__ void egpu_trace_scale(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= 2.0f;
}
"""


def launch_from_python(cp, x):
    kernel = cp.RawKernel(SOURCE, "egpu_trace_scale")
    n = x.size
    for _ in range(LAUNCHES):
        kernel(((n + 255) // 256,), (256,), (x, cp.int32(n)))


def test_trace_joins_launches_to_kernels(tmp_path):
    cp = pytest.importorskip("cupy")
    x = cp.ones(1 << 20, dtype=cp.float32)
    with egpu.Trace() as t:
        launch_from_python(cp, x)
        x.get()  # a copy back: recorded too
    assert float(x[0]) == 2.0 ** LAUNCHES

    st = t.stats
    assert st.kernels >= LAUNCHES and st.matched >= LAUNCHES
    assert st.copies >= 1 and st.gpu_ns > 0 and st.devices >= 1
    # the tracer's own cost: a stack per launch, timed
    assert st.stacks >= LAUNCHES and 0 < st.stack_ns <= st.host_ns
    assert st.stacks_slow <= st.stacks and st.stacks_reused <= st.stacks
    mine = [k for k in t.kernels if k.name == "egpu_trace_scale"]
    assert len(mine) == 1, [k.name for k in t.kernels]
    k = mine[0]
    assert k.launches == LAUNCHES and 0 < k.hottest_ns <= k.gpu_ns
    assert "LaunchKernel" in k.hottest_path.split(";")[-1], k.hottest_path

    summary = t.summary()
    assert "egpu_trace_scale" in summary and k.hottest_path in summary

    t.write(tmp_path / "t.folded")
    t.write(tmp_path / "t.json")
    t.write(tmp_path / "t.svg")
    t.write(tmp_path / "t.perfetto-trace")
    t.write(tmp_path / "timeline", format="perfetto")
    pb = (tmp_path / "t.perfetto-trace").read_bytes()
    assert pb[0] == 0x0A and b"egpu_trace_scale" in pb
    assert (tmp_path / "timeline").read_bytes() == pb
    folded = (tmp_path / "t.folded").read_text()
    assert "[GPU_Kernel]egpu_trace_scale " in folded
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    flows = [e for e in events if e["ph"] == "s"]
    assert len(flows) >= LAUNCHES
    ET.parse(tmp_path / "t.svg")
    t.write(tmp_path / "t.pb.gz")
    profile = gzip.decompress((tmp_path / "t.pb.gz").read_bytes())
    assert b"[GPU_Kernel]egpu_trace_scale" in profile
    with pytest.raises(egpu.InvalidArgument):
        t.write(tmp_path / "t.bin")
    t.close()
    with pytest.raises(egpu.InvalidArgument):
        t.stats
