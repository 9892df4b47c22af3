# SPDX-License-Identifier: MIT
"""Fixtures for the egpu Python tests. ctest passes the test data built
with the library in environment variables (see ../CMakeLists.txt)."""

import os

import pytest

import egpu


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU and its CUDA driver")


def pytest_collection_modifyitems(config, items):
    if egpu.gpu_available():
        return
    skip = pytest.mark.skip(reason=f"no GPU: {egpu.gpu_unavailable_reason()}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_sessionfinish(session, exitstatus):
    """With EGPU_PYTEST_SKIP_RC set, a run whose every test was skipped
    exits with that code, so ctest reports it as skipped, not passed."""
    rc = os.environ.get("EGPU_PYTEST_SKIP_RC")
    stats = session.config.pluginmanager.get_plugin("terminalreporter").stats
    if rc and exitstatus == 0 and stats.get("skipped") and not stats.get("passed"):
        session.exitstatus = int(rc)


def _data(var):
    path = os.environ.get(var)
    if not path:
        raise RuntimeError(f"{var} is not set: run these tests through ctest")
    return path


@pytest.fixture
def probes_path():
    """tests/probes.bpf.o as built by the build."""
    return _data("EGPU_TEST_PROBES")


@pytest.fixture
def events_path():
    """tests/events.bpf.o: ring buffer programs run on the CPU."""
    return _data("EGPU_TEST_EVENTS")


@pytest.fixture
def mem_path():
    """tests/mem.bpf.o: a memory probe of add_one counting accesses."""
    return _data("EGPU_TEST_MEM")


@pytest.fixture
def mixed_path():
    """tests/api/mixed.bpf.o: one accepted probe of saxpy, one refused."""
    return _data("EGPU_TEST_MIXED")


@pytest.fixture
def unbounded_path():
    """tests/api/unbounded.bpf.o: a loop the verifier cannot bound."""
    return _data("EGPU_TEST_UNBOUNDED")


@pytest.fixture
def params_path():
    """tests/api/params.bpf.o: probes of saxpy reading its argument n."""
    return _data("EGPU_TEST_PARAMS")


@pytest.fixture
def egpu_cli():
    """The egpu command-line tool of the build (skips without one)."""
    path = os.environ.get("EGPU_CLI")
    if not path:
        pytest.skip("the build has no egpu tool")
    return path


@pytest.fixture
def kernels_ptx():
    """PTX of tests/kernels.cu (nvcc -arch=sm_90)."""
    with open(_data("EGPU_TEST_PTX")) as f:
        return f.read()


@pytest.fixture
def ctx():
    with egpu.Context(offline=True) as c:
        yield c


@pytest.fixture
def obj(ctx, probes_path):
    return ctx.load(probes_path)


@pytest.fixture
def launches_path():
    """tests/launch_count.bpf.o: per kernel id, threads that ran the entry
    probe ("threads") and threads launched ("launched")."""
    return _data("EGPU_TEST_LAUNCHES")


@pytest.fixture
def kcount_path():
    """tests/kernel_count.bpf.o: threads entering and leaving each kernel,
    by kernel id (maps "entries" and "exits")."""
    return _data("EGPU_TEST_KCOUNT")


@pytest.fixture
def uhelpers_path():
    """tests/helpers/helpers.bpf.o: direct runs calling user helpers
    0x10000-0x10004 of every signature shape."""
    return _data("EGPU_TEST_UHELPERS")


@pytest.fixture
def gpu_uhelpers_path():
    """tests/helpers/gpu_helpers.bpf.o: entry probes of the kernels in
    EGPU_TEST_HELPER_PTX calling user helpers 0x10000-0x10003."""
    return _data("EGPU_TEST_GPU_UHELPERS")


@pytest.fixture
def helper_kernels_ptx():
    """tests/helpers/kernels.cu as PTX: ordered, flood, timed."""
    with open(_data("EGPU_TEST_HELPER_PTX")) as f:
        return f.read()
