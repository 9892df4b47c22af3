# SPDX-License-Identifier: MIT
"""egpu.Trace without a GPU: starting fails cleanly, with the library's
reason, and options are checked before the library sees them."""

import pytest

import egpu


@pytest.fixture
def no_gpu():
    if egpu.gpu_available():
        pytest.skip("a GPU is present: a trace would start")


def test_start_without_a_gpu_raises_no_device(no_gpu):
    with pytest.raises((egpu.NoDevice, egpu.NotSupported)) as e:
        egpu.Trace()
    assert e.value.code in (egpu.NoDevice.code, egpu.NotSupported.code)
    assert str(e.value)


def test_failed_start_leaves_nothing_running(no_gpu):
    for _ in range(2):  # a failed start holds no CUPTI subscription
        with pytest.raises(egpu.Error) as e:
            egpu.Trace(max_frames=8, copies=False)
        assert not isinstance(e.value, egpu.Busy)


def test_options_are_checked():
    with pytest.raises(TypeError):
        egpu.Trace(frames=8)
    with pytest.raises(ValueError):
        egpu.Trace(buffer_size=-1)
    with pytest.raises(ValueError):
        egpu.Trace(last=-1.0)
    with pytest.raises(ValueError):
        egpu.Trace(last=float("nan"))


def test_records_are_plain_data():
    k = egpu.TraceKernel("matmul", 3, 3000, "main;f;cudaLaunchKernel", 2000)
    assert k.hottest_path.endswith("cudaLaunchKernel") and k.launches == 3
    s = egpu.TraceStats(launches=3, kernels=3, matched=3, copies=0, lost=0,
                        gpu_ns=3000, devices=1)
    assert s.matched == s.kernels


def test_stream_options_are_checked(tmp_path):
    path = tmp_path / "t.perfetto-trace"
    with pytest.raises(ValueError):
        egpu.Trace(stream=path, max_size=-1)
    # checked before a trace starts, with or without a GPU
    for bad in (dict(max_size=1 << 20),            # nothing streamed
                dict(stream=path, last=1.0),       # a flight recorder
                dict(stream=path, max_size=1000),  # under 64 KiB
                dict(stream=path, rotate=3),       # rotates at no size
                dict(stream="")):
        with pytest.raises(egpu.InvalidArgument) as e:
            egpu.Trace(**bad)
        assert "egpu_trace_start" in str(e.value), bad
    assert not path.exists()
