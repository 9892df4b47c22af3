# SPDX-License-Identifier: MIT
"""Memory probes offline: spaces and kinds chosen by name, the report's
memory sites, and the clock calibration refused without a GPU; the
splicer's trace mode (Context.mem_trace) and its options."""

import pytest

import egpu
from test_instrument import assemble


@pytest.fixture
def count_mem(ctx, mem_path):
    return ctx.load(mem_path).programs["count_mem"]


def sites_of(ctx, kernels_ptx):
    _, report = ctx.instrument(kernels_ptx)
    return report.mem_sites


def test_mem_sites_are_reported(ctx, count_mem, kernels_ptx, tmp_path):
    link = count_mem.attach()
    assert (link.kernel, link.at) == ("add_one", "mem")
    out, report = ctx.instrument(kernels_ptx)
    sites = report.mem_sites
    assert len(sites) >= 3  # its parameters, x[i] loaded and stored
    assert [s.site for s in sites] == list(range(len(sites)))
    for s in sites:
        assert isinstance(s, egpu.MemSite)
        assert (s.kernel_id, s.function) == (0, "add_one")
        assert s.kind in egpu.MEM_KINDS and s.space in egpu.MEM_SPACES
        assert s.ptx_line > 0 and s.text.startswith(("ld", "st"))
        assert s.text in kernels_ptx.splitlines()[s.ptx_line - 1]
        assert s.line == 0 and s.file is None  # nvcc without -lineinfo
    glob = {(s.kind, s.space, s.size) for s in sites if s.space == "global"}
    assert glob == {("load", "global", 4), ("store", "global", 4)}
    add_one, scale = report.kernels
    assert (add_one.mem_points, scale.mem_points) == (len(sites), 0)
    assemble(out, tmp_path)


def test_masks_reduce_the_sites(ctx, count_mem, kernels_ptx):
    link = count_mem.attach()
    every = sites_of(ctx, kernels_ptx)
    link.detach()
    link = count_mem.attach(spaces=("global", "shared"))
    glob = sites_of(ctx, kernels_ptx)
    assert 0 < len(glob) < len(every)
    assert {s.space for s in glob} == {"global"}
    link.detach()
    count_mem.attach(spaces="global", kinds=("store",))
    stores = sites_of(ctx, kernels_ptx)
    assert [(s.kind, s.space) for s in stores] == [("store", "global")]
    assert "st.global" in stores[0].text


def test_a_kind_absent_from_the_kernel_probes_nothing(ctx, count_mem, kernels_ptx):
    count_mem.attach(kinds=["atomic", "async"])
    _, report = ctx.instrument(kernels_ptx)
    assert report.mem_sites == () and report.kernels[0].mem_points == 0


@pytest.mark.parametrize("kw,match", [
    (dict(spaces=("global", "globl")), "memory space 'globl': expected one of generic, global"),
    (dict(kinds="read"), "memory access kind 'read': expected one of load, store"),
    (dict(kinds=(2,)), "memory access kind 2: expected one of"),
    (dict(spaces=()), "memory space: an empty selection"),
])
def test_bad_names_raise(count_mem, kw, match):
    with pytest.raises(egpu.InvalidArgument, match=match):
        count_mem.attach(**kw)


def test_masks_are_for_memory_probes_only(obj):
    with pytest.raises(egpu.Error, match="memory probes only"):
        obj.programs["on_entry"].attach(spaces="global")


def test_reports_without_memory_probes_have_no_sites(ctx, obj, kernels_ptx):
    obj.attach_all()
    _, report = ctx.instrument(kernels_ptx)
    assert report.mem_sites == ()
    assert all(k.mem_points == 0 for k in report.kernels)


def test_clock_refused_offline(ctx):
    with pytest.raises(egpu.InvalidArgument, match="offline"):
        ctx.clock_sync()
    with pytest.raises(egpu.InvalidArgument, match="offline"):
        ctx.clock()


@pytest.mark.skipif(egpu.gpu_available(), reason="a GPU is usable here")
def test_clock_without_a_gpu_raises_no_device():
    with egpu.Context() as ctx:
        with pytest.raises(egpu.NoDevice, match="egpu_clock_sync"):
            ctx.clock_sync()
        with pytest.raises(egpu.NoDevice):
            ctx.clock()


def test_gpu_to_host_subtracts_the_offset_and_clamps():
    clk = egpu.Clock(offset_ns=1000, error_ns=1, host_ns=0, round_trip_ns=2,
                     step_ns=32, rounds=64)
    assert clk.gpu_to_host(5000) == 4000 and clk.gpu_to_host(10) == 0
    late = egpu.Clock(-1000, 1, 0, 2, 32, 64)
    assert late.gpu_to_host(2**64 - 10) == 2**64 - 1
    with pytest.raises(egpu.InvalidArgument, match="unsigned 64-bit"):
        clk.gpu_to_host(-1)


def test_mem_trace_records_every_global_access(ctx, events_path, kernels_ptx,
                                               tmp_path):
    """The splicer's trace mode: no probe program, every global access of
    every kernel written into the ring's spans, ptxas happy."""
    obj = ctx.load(events_path)
    plain, _ = ctx.instrument(kernels_ptx)
    assert "// egpu trace" not in plain
    ctx.mem_trace(obj.maps["events"])
    out, report = ctx.instrument(kernels_ptx)
    assert out.count("// egpu trace\n") == len(report.mem_sites) > 0
    assert {s.space for s in report.mem_sites} == {"global"}
    assert ".maxnreg" not in out  # offline: no untraced count to keep
    assemble(out, tmp_path)


def test_mem_trace_options(ctx, events_path, kernels_ptx):
    obj = ctx.load(events_path)
    ctx.mem_trace(obj.maps["events"], kernel="nothing_like_it")
    out, report = ctx.instrument(kernels_ptx)
    assert "// egpu trace" not in out
    ctx.mem_trace(obj.maps["events"], kinds="store", max_registers=40)
    out, report = ctx.instrument(kernels_ptx)
    assert {s.kind for s in report.mem_sites} == {"store"}
    assert ".maxnreg 40 // egpu trace\n" in out
    ctx.mem_trace(obj.maps["events"], max_registers="any")
    out, _ = ctx.instrument(kernels_ptx)
    assert ".maxnreg" not in out


@pytest.mark.parametrize("kw, error, match", [
    (dict(max_registers=300), egpu.InvalidArgument, "max_registers 300"),
    (dict(max_registers="many"), egpu.InvalidArgument, "max_registers 'many'"),
    (dict(spaces="nowhere"), egpu.InvalidArgument, "memory space 'nowhere'"),
])
def test_mem_trace_bad_options_raise(ctx, events_path, kw, error, match):
    obj = ctx.load(events_path)
    with pytest.raises(error, match=match):
        ctx.mem_trace(obj.maps["events"], **kw)


def test_mem_trace_needs_a_ring_of_the_context(ctx, events_path):
    obj = ctx.load(events_path)
    with pytest.raises(egpu.InvalidArgument, match="'plain' is not a ring map"):
        ctx.mem_trace(obj.maps["plain"])
    with egpu.Context(offline=True) as other:
        theirs = other.load(events_path)
        with pytest.raises(egpu.InvalidArgument, match="not a ring map of this context"):
            ctx.mem_trace(theirs.maps["events"])
