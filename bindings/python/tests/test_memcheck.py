# SPDX-License-Identifier: MIT
"""egpu.memcheck.run without a GPU: the egpu tool of the build runs the
command with a stand-in for the attach agent (tests/cli/fake_agent.c),
which writes at the command's exit the report this test wrote; run()
must give back its error count and report, pass the options on, and
raise when there is no report."""
import os
import sys

import pytest

import egpu
import egpu.memcheck

TEXT = ("egpu memcheck: invalid 4-byte global store in k(float*) at a.cu:12\n"
        "    block (0,0,0) thread (0,0,0), address 0x7f0000400000: just past the end\n"
        "    and 1,023 more at this site\n"
        "egpu memcheck: 1,024 errors at 1 site\n")
JSON = ('{"reports":[{"kernel":"k(float*)","file":"a.cu","line":12,"kind":"store",'
        '"space":"global","count":2}],"errors":2,"sites":1,"sites_not_shown":0,'
        '"errors_not_shown":0}\n')


@pytest.fixture
def fake(egpu_cli, tmp_path, monkeypatch):
    """Writes the report the stand-in agent will hand over; returns the
    egpu tool."""
    agent = os.environ.get("EGPU_TEST_FAKE_AGENT")
    if not agent:
        pytest.skip("the build has no stand-in agent")
    monkeypatch.setenv("EGPU_ATTACH_LIB", agent)
    # sanitized, the stand-in goes ahead of the sanitizers' runtimes in
    # the command's LD_PRELOAD (as in tests/cli)
    monkeypatch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "detect_leaks=0")
                       + ":verify_asan_link_order=0")
    monkeypatch.setenv("EGPU_FAKE_REPORT", str(tmp_path / "report"))

    def write(text):
        (tmp_path / "report").write_text(text)
        return egpu_cli
    return write


def test_text_report(fake):
    r = egpu.memcheck.run(["bash", "-c", "exit 0"], cli=fake(TEXT))
    assert (r.returncode, r.errors, r.report) == (1, 1024, TEXT)
    r = egpu.memcheck.run(["bash", "-c", "exit 0"], cli=fake("egpu memcheck: no errors\n"))
    assert (r.returncode, r.errors) == (0, 0)


def test_json_report(fake):
    r = egpu.memcheck.run(["bash", "-c", "exit 3"], json=True, cli=fake(JSON))
    assert (r.returncode, r.errors) == (3, 2)
    assert r.report["reports"][0]["line"] == 12 and r.report["sites"] == 1
    # a note of the agent's before the report's object
    note = "egpu memcheck: 3 more sites went wrong; the log kept the first 4096\n"
    r = egpu.memcheck.run(["bash", "-c", "exit 0"], json=True, cli=fake(note + JSON))
    assert (r.returncode, r.errors, r.report["sites"]) == (1, 2, 1)


def test_options_reach_the_agent(fake, tmp_path):
    seen = tmp_path / "env"
    cmd = ["bash", "-c", f'echo "$EGPU_MEMCHECK $EGPU_MEMCHECK_CONTAIN $EGPU_MEMCHECK_MAX '
           f'$EGPU_ATTACH_JSON" > {seen}']
    egpu.memcheck.run(cmd, contain=True, json=True, max_reports=5, cli=fake(JSON))
    assert seen.read_text() == "1 1 5 1\n"
    egpu.memcheck.run(cmd, cli=fake(TEXT))
    assert seen.read_text() == "1   \n"


def test_no_report(fake):
    with pytest.raises(egpu.Error, match="no report .exit status 137"):
        egpu.memcheck.run(["bash", "-c", "kill -KILL $$"], cli=fake(TEXT))
    with pytest.raises(egpu.Error, match="no report .exit status 125"):
        egpu.memcheck.run(["bash", "-c", "exit 0"], json=True, cli=fake("modules: 1\n"))


def test_bad_arguments(fake):
    for argv in ([], "bash -c true"):
        with pytest.raises(egpu.InvalidArgument, match="argv"):
            egpu.memcheck.run(argv, cli=fake(TEXT))
    for n in (0, -1, 2.5, True, "3"):
        with pytest.raises(egpu.InvalidArgument, match="max_reports"):
            egpu.memcheck.run(["true"], max_reports=n, cli=fake(TEXT))


def test_no_tool(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(egpu.NotFound, match="not on PATH"):
        egpu.memcheck.run(["true"])


# -- in process: egpu.memcheck.Checker, without a GPU ----------------------

def test_ranges_minus():
    from egpu.memcheck import _ranges_minus
    assert _ranges_minus([(0, 10), (20, 30)], [(5, 25)]) == [(0, 5), (25, 30)]
    assert _ranges_minus([(0, 10)], []) == [(0, 10)]
    assert _ranges_minus([(0, 10)], [(0, 10)]) == []
    assert _ranges_minus([(0, 100)], [(10, 20), (30, 40)]) == [
        (0, 10), (20, 30), (40, 100)]
    assert _ranges_minus([], [(0, 1)]) == []


class FakeTorch:
    """torch.cuda's allocator statistics and snapshot, as set by a test."""

    def __init__(self):
        self.segments = []
        self.snapshots = 0
        self.cuda = self

    def memory_stats(self, device):
        return {"segment.all.allocated": len(self.segments),
                "segment.all.freed": 0,
                "reserved_bytes.all.current": sum(s["total_size"] for s in self.segments)}

    def memory_snapshot(self):
        self.snapshots += 1
        return list(self.segments)


class FakeChecker:
    def __init__(self):
        self.calls = []

    def _track(self, base, size, kind):
        self.calls.append(("track", base, size, kind))

    def _untrack(self, base):
        self.calls.append(("untrack", base))

    def _untrack_range(self, base, size):
        self.calls.append(("untrack_range", base, size))


def seg(address, size, device=0, expandable=False):
    return {"device": device, "address": address, "total_size": size,
            "is_expandable": expandable}


def test_torch_segments_follow_the_allocator(monkeypatch):
    import egpu._egpu as c
    from egpu.memcheck import TorchSegments
    torch, chk = FakeTorch(), FakeChecker()
    monkeypatch.setitem(sys.modules, "torch", torch)
    segs = TorchSegments(chk, 0)
    torch.segments = [seg(0x1000, 0x200), seg(0x9000, 0x100, device=1)]
    segs.sync()
    assert chk.calls == [("track", 0x1000, 0x200, c.EGPU_MEMCHECK_ALLOC)]
    segs.sync()  # nothing changed: no snapshot read
    assert torch.snapshots == 1 and len(chk.calls) == 1
    # released, and its address handed out again with another size
    chk.calls.clear()
    torch.segments = [seg(0x1000, 0x400)]
    segs.sync()
    assert chk.calls == [("untrack", 0x1000),
                         ("track", 0x1000, 0x400, c.EGPU_MEMCHECK_ALLOC)]
    # an expandable segment grows, then shrinks: mapped ranges only
    chk.calls.clear()
    torch.segments = [seg(0x100000, 0x2000, expandable=True)]
    segs.sync()
    torch.segments = [seg(0x100000, 0x6000, expandable=True)]
    segs.sync()
    torch.segments = [seg(0x100000, 0x1000, expandable=True)]
    segs.sync()
    assert chk.calls == [
        ("track", 0x100000, 0x2000, c.EGPU_MEMCHECK_VMM),
        ("untrack", 0x1000),
        ("track", 0x102000, 0x4000, c.EGPU_MEMCHECK_VMM),
        ("untrack_range", 0x101000, 0x5000)]


def test_checker_without_gpu_leaves_nothing_behind(monkeypatch):
    import egpu._egpu as c
    import egpu.memcheck
    import egpu.triton
    from test_triton_hook import fake_triton
    try:
        c.egpu_memcheck_free(c.egpu_memcheck_new(None))
        pytest.skip("a GPU is here: the checker starts")
    except egpu.NoDevice:
        pass
    knobs = fake_triton(monkeypatch)
    mc = egpu.memcheck.Checker()
    with pytest.raises(egpu.NoDevice):
        mc.start()
    with pytest.raises(egpu.Error, match="not started"):
        mc.track(0x1000, 16)
    assert knobs.runtime.add_stages_inspection_hook is None
    egpu.triton.instrument(egpu.Context(offline=True)).undo()  # not Busy
    mc.stop()  # nothing to stop
    assert (mc.errors, mc.reports, mc.kernels) == (0, [], 0)


class Lazy:
    """Triton's LazyDict: the launch's metadata made on get()."""

    def __init__(self, data):
        self._data = data

    def get(self):
        return self._data


def test_module_variables_once_per_kernel(monkeypatch):
    """A kernel's first launch hands its module's PTX (each compilation
    of its name) to the checker with its handle; later launches don't."""
    import types
    import egpu.memcheck as m
    calls = []
    monkeypatch.setattr(m._c, "egpu_memcheck_track_globals",
                        lambda mc, fn, ptx: calls.append((mc, fn, ptx)))
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    chk = m.Checker()
    chk._mc = "mc"
    chk._inst = types.SimpleNamespace(ptx={"k": ["ptx1", "ptx2"]})
    chk._on_launch(Lazy({"name": "k", "function": 7}))
    chk._on_launch(Lazy({"name": "k", "function": 7}))
    chk._on_launch({"name": "unknown", "function": 8})
    assert calls == [("mc", 7, "ptx1"), ("mc", 7, "ptx2")]
    assert chk.launches == 3
