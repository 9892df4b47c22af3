# SPDX-License-Identifier: MIT
"""Memory-safety checking of CUDA kernels from Python (docs/memcheck.md).

In this process, the Triton kernels it compiles (``@triton.jit`` and
torch.compile's), with :class:`Checker`::

    with egpu.memcheck.Checker() as mc:    # raises at exit on a bad access
        model(x)
    print(mc.kernels, "Triton kernels checked")

Another program, every kernel it loads with PTX, under ``egpu memcheck``
(the attach agent preloaded into it), with :func:`run`::

    r = egpu.memcheck.run(["python3", "train.py"], json=True, contain=True)
    for e in r.report["reports"]:
        print(e["kernel"], e["file"], e["line"], e["where"])
"""
import json as _json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass

from . import Context, _MEM_KIND_NAMES, _SPACE_NAMES
from . import _egpu as _c
from ._errors import Error, InvalidArgument, NotFound, NotSupported

# egpu memcheck's exit status when it could check nothing (docs/memcheck.md).
NOT_CHECKED = 125
# The text report's summary line: "egpu memcheck: no errors",
# "egpu memcheck: 1,024 errors at 1 site".
_SUMMARY = re.compile(r"^egpu memcheck: (?:no errors|([\d,]+) errors? at)", re.M)


@dataclass(frozen=True)
class Result:
    """What ``egpu memcheck`` reported. ``returncode``: its exit status
    (the program's when it failed, else 1 with errors, 0 without);
    ``errors``: the bad accesses counted; ``report``: the parsed JSON
    report (``reports``, ``errors``, ``sites``, ...) with ``json=True``,
    else the text report."""
    returncode: int
    errors: int
    report: object


def _cli(cli):
    path = cli or shutil.which("egpu")
    if not path:
        raise NotFound("egpu.memcheck: the egpu tool is not on PATH (pass cli=)")
    return path


def _parse(text, as_json):
    """(errors counted, report) of the report's text; errors None: it has
    no summary."""
    if not as_json:
        found = _SUMMARY.findall(text)
        return (int(found[-1].replace(",", "") or 0) if found else None), text
    # the report's object is its last line; notes or a probe's report
    # (egpu attach's, beside memcheck) may come before it
    last = [l for l in text.splitlines() if l.startswith("{")][-1:]
    try:
        report = _json.loads(last[0] if last else text)
        return int(report["errors"]), report
    except (ValueError, KeyError, TypeError):
        return None, text


def run(argv, contain=False, json=False, max_reports=None, cli=None):
    """Run the command ``argv`` (a list) under ``egpu memcheck``, its
    output passing through, and return a :class:`Result`. ``contain``: a
    bad load gives 0 and a bad store is dropped, so the program runs on;
    ``max_reports``: sites printed (default 20); ``cli``: the egpu tool
    (default: ``egpu`` on PATH). Raises :class:`egpu.Error` when there is
    no report (the program killed, or the agent could not run in it)."""
    if not argv or isinstance(argv, (str, bytes)):
        raise InvalidArgument("egpu.memcheck.run: argv must be a non-empty list")
    opts = ["--json"] if json else []
    opts += ["--contain"] if contain else []
    if max_reports is not None:
        if isinstance(max_reports, bool) or not isinstance(max_reports, int) or max_reports < 1:
            raise InvalidArgument(f"egpu.memcheck.run: max_reports must be an int >= 1, not {max_reports!r}")
        opts += ["--max-reports", str(max_reports)]
    with tempfile.TemporaryDirectory(prefix="egpu-memcheck-") as tmp:
        path = os.path.join(tmp, "report")
        rc = subprocess.run([_cli(cli), "memcheck", *opts, "-o", path, "--",
                             *map(str, argv)]).returncode
        try:
            with open(path) as f:
                text = f.read()
        except FileNotFoundError:
            text = ""
    errors, report = _parse(text, json)
    if errors is None:
        raise Error(f"egpu memcheck {argv[0]}: no report (exit status {rc}; "
                    "its messages are on stderr)")
    return Result(rc, errors, report)


# -- in-process: Checker --------------------------------------------------

class Violations(Error):
    """Bad accesses were found (Checker's exit): ``reports`` as
    Checker.reports, the message the text report."""

    def __init__(self, message, reports):
        super().__init__(message)
        self.reports = reports


def _ranges_minus(a, b):
    """The parts of the (start, end) ranges ``a`` outside every range of
    ``b``, both sorted and disjoint."""
    out, j = [], 0
    for start, end in a:
        while j < len(b) and b[j][1] <= start:
            j += 1
        k = j
        while start < end and k < len(b) and b[k][0] < end:
            if b[k][0] > start:
                out.append((start, b[k][0]))
            start = max(start, b[k][1])
            k += 1
        if start < end:
            out.append((start, end))
    return out


class TorchSegments:
    """PyTorch's caching allocator's segments on one device, kept in a
    checker's table: the memory every tensor of that device lies in.

    Segments, not tensors: a kernel reaches memory only through its
    pointer arguments, each inside one tensor's storage inside one
    segment, and the caching allocator hands the blocks of a segment to
    new tensors while kernels queued before may still use the old ones;
    a segment lives from its cudaMalloc (or cuMemMap, with expandable
    segments) to its release, so tracking segments never reports a
    correct kernel. It misses overruns inside a segment (into a
    neighbouring tensor's block), which only tensor-level tracking in
    stream order would see.

    ``sync()`` reads torch.cuda.memory_snapshot() only when the
    allocator's segment counters or reserved bytes changed since the
    last time; cheap to call before every launch."""

    def __init__(self, checker, device):
        import torch
        self._torch = torch
        self._checker = checker
        self._device = device
        self._key = None
        self._fixed = {}   # address -> size: cudaMalloc'd segments
        self._mapped = []  # sorted (start, end): expandable segments' maps

    def _stats_key(self):
        s = self._torch.cuda.memory_stats(self._device)
        return (s.get("segment.all.allocated"), s.get("segment.all.freed"),
                s.get("reserved_bytes.all.current"))

    def _read(self):
        fixed, mapped = {}, []
        for seg in self._torch.cuda.memory_snapshot():
            if seg.get("device") != self._device or not seg.get("total_size"):
                continue
            if seg.get("is_expandable"):
                mapped.append((seg["address"], seg["address"] + seg["total_size"]))
            else:
                fixed[seg["address"]] = seg["total_size"]
        mapped.sort()
        merged = []
        for start, end in mapped:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return fixed, merged

    def sync(self):
        """Make the table hold the segments as they are now. Mapped
        ranges grow before they shrink, so a kernel still running sees no
        moment without the memory it uses; a cudaMalloc'd segment leaves
        before its address comes back with another size (its cudaFree
        waited for the GPU)."""
        key = self._stats_key()
        if key == self._key:
            return
        fixed, mapped = self._read()
        c = self._checker
        for start, end in _ranges_minus(mapped, self._mapped):
            c._track(start, end - start, _c.EGPU_MEMCHECK_VMM)
        for start, end in _ranges_minus(self._mapped, mapped):
            c._untrack_range(start, end - start)
        for base, size in self._fixed.items():
            if fixed.get(base) != size:
                c._untrack(base)
        for base, size in fixed.items():
            if self._fixed.get(base) != size:
                c._track(base, size, _c.EGPU_MEMCHECK_ALLOC)
        self._fixed, self._mapped, self._key = fixed, mapped, key


def _word(names, value):
    return names.get(value, str(value))


class Checker:
    """Check every access of the Triton kernels this process compiles and
    runs while it is active (a context manager), in process: egpu.triton
    instruments them with the check, and the memory they may reach is
    PyTorch's (its caching allocator's segments, :class:`TorchSegments`,
    synchronised before every Triton launch) plus what :meth:`track` is
    told of.

    ``probe``: an egpu.Object whose attached programs run too (default: a
    context of the checker's own); ``contain``: a bad load gives 0 and a
    bad store is dropped, so the program runs on; ``max_reports``: sites
    the text report prints; ``max_allocs``: ranges tracked at once;
    ``raise_errors``: leaving the ``with`` block raises
    :class:`Violations` when there were bad accesses (unless the block
    raised).

    After it: ``reports`` (a list of dicts: kernel, file, line, site, kind
    and space as words, size, address, block, thread, where, count),
    ``errors`` (bad accesses), ``text`` (the report as ``egpu memcheck``
    prints it), ``kernels`` (Triton kernels instrumented with the check)
    and ``launches`` (Triton launches seen). One device: the one current
    at the start."""

    def __init__(self, probe=None, contain=False, max_reports=20,
                 max_allocs=0, raise_errors=True):
        self._probe = probe
        self._opts = dict(contain=contain, max_reports=max_reports,
                          max_allocs=max_allocs)
        self._raise = raise_errors
        self._ctx = None
        self._own_ctx = None
        self._mc = None
        self._inst = None
        self._segments = None
        self._functions = set()  # kernels whose module's variables are in
        self._lock = threading.Lock()
        self.reports = []
        self.errors = 0
        self.text = ""
        self.kernels = 0
        self.launches = 0

    def _live(self):
        if self._mc is None:
            raise Error("egpu.memcheck.Checker: not started")
        return self._mc

    def _track(self, base, size, kind):
        _c.egpu_memcheck_track(self._live(), base, size, kind)

    def _untrack(self, base):
        _c.egpu_memcheck_untrack(self._live(), base)

    def _untrack_range(self, base, size):
        _c.egpu_memcheck_untrack_range(self._live(), base, size)

    def track(self, base, size):
        """Memory kernels may reach besides PyTorch's: [base, base + size)
        (device addresses, ints), live from now on."""
        self._track(int(base), int(size), _c.EGPU_MEMCHECK_ALLOC)

    def untrack(self, base):
        """The range track() was given at ``base`` is dead from now on."""
        self._untrack(int(base))

    def start(self):
        """Begin checking (``with`` calls it)."""
        import egpu.triton
        if self._mc is not None:
            raise Error("egpu.memcheck.Checker: already started")
        if self._probe is None:
            self._own_ctx = self._ctx = Context(sm=self._torch_sm())
        else:
            self._ctx = self._probe._ctx
        try:
            self._mc = _c.egpu_memcheck_new(self._opts)
            _c.egpu_memcheck_attach(self._ctx._live(), self._mc)
            self._segments = self._torch_segments()
            self._on_launch(None)
            self._inst = egpu.triton.instrument(
                self._ctx if self._probe is None else self._probe,
                attach=self._other_device,
                on_launch=self._on_launch)
        except BaseException:
            self._free()
            raise
        return self

    @staticmethod
    def _torch_sm():
        """The current device's target when PyTorch knows it (None: the
        library's default)."""
        torch = sys.modules.get("torch")
        if torch is None or not torch.cuda.is_initialized():
            return None
        return "sm_%d%d" % torch.cuda.get_device_capability()

    def _torch_segments(self):
        if "torch" not in sys.modules:
            return None
        import torch
        if not torch.cuda.is_available() or not torch.cuda.is_initialized():
            return None
        return TorchSegments(self, torch.cuda.current_device())

    def _other_device(self, obj):
        raise NotSupported("egpu.memcheck.Checker checks one device, the one "
                           "current at its start; a Triton kernel compiles for "
                           "another")

    def _on_launch(self, metadata):
        with self._lock:  # launches from several threads
            if metadata is not None:
                self.launches += 1
                self._module_variables(metadata)
            if self._segments is None:
                self._segments = self._torch_segments()  # torch started since
            if self._segments is not None:
                self._segments.sync()

    def _module_variables(self, metadata):
        """The first launch of a kernel's module: its .global and .const
        variables (libdevice's tables, e.g. for sin and cos) join the
        table; Triton loads the module itself, so its kernel handle is
        how the checker finds their addresses."""
        md = metadata if isinstance(metadata, dict) else metadata.get()
        function = md.get("function")
        if not function or function in self._functions:
            return
        self._functions.add(function)
        for ptx in self._inst.ptx.get(md.get("name"), ()):
            _c.egpu_memcheck_track_globals(self._live(), function, ptx)

    def stop(self):
        """Stop checking: no instrumented kernel runs afterwards; waits
        for the GPU, then reads the reports (``with`` calls it)."""
        if self._mc is None:
            return
        try:
            if self._inst is not None:
                self.kernels = len(self._inst.kernels)
                self._inst.undo()
            if self._segments is not None:
                self._segments._torch.cuda.synchronize()
            self.reports = [dict(r, kind=_word(_MEM_KIND_NAMES, r["kind"]),
                                 space=_word(_SPACE_NAMES, r["space"]))
                            for r in _c.memcheck_reports(self._mc)]
            self.errors = _c.egpu_memcheck_errors(self._mc)
            self.text = _c.egpu_memcheck_text(self._mc, False)
        finally:
            self._free()

    def _free(self):
        if self._inst is not None:
            self._inst.undo()
            self._inst = None
        if self._mc is not None:
            _c.egpu_memcheck_free(self._mc)
            self._mc = None
        if self._own_ctx is not None:
            self._own_ctx.close()
            self._own_ctx = None
        self._segments = None

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        if self.errors and self._raise and exc_type is None:
            raise Violations(self.text.rstrip("\n"), self.reports)
