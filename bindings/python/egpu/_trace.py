# SPDX-License-Identifier: MIT
"""Tracing: which CPU call paths launched which GPU kernels, for how long.

    with egpu.Trace() as t:          # CUPTI records from here ...
        run_model()
    # ... to here (the block's end stops and joins the trace)
    print(t.summary())
    t.write("model.svg")             # flame graph; .folded, .json too
    t.write("model.perfetto-trace")  # Perfetto's binary timeline
    for k in t.kernels:
        print(k.name, k.launches, k.gpu_ns, k.hottest_path)

One trace runs per process at a time (egpu.Busy otherwise); without a
CUDA driver or libcupti, starting one raises egpu.NoDevice.
"""

import os
import tempfile
from dataclasses import dataclass

from . import _egpu as _c
from ._errors import InvalidArgument

_FORMATS = {"folded": _c.EGPU_TRACE_FOLDED, "chrome": _c.EGPU_TRACE_CHROME,
            "json": _c.EGPU_TRACE_CHROME, "svg": _c.EGPU_TRACE_SVG,
            "summary": _c.EGPU_TRACE_SUMMARY,
            "perfetto": _c.EGPU_TRACE_PERFETTO}
_BY_SUFFIX = {".perfetto-trace": "perfetto", ".folded": "folded",
              ".json": "chrome", ".svg": "svg", ".txt": "summary",
              ".gz": "pprof", ".pprof": "pprof"}


@dataclass(frozen=True)
class TraceStats:
    """Totals of a stopped trace."""
    launches: int   # launch API calls (kernel and graph)
    kernels: int    # kernel executions
    matched: int    # kernel executions joined to their launch's stack
    copies: int     # memcpy and memset operations
    lost: int       # activity records CUPTI dropped
    gpu_ns: int     # summed kernel time
    devices: int    # devices that ran kernels
    # what tracing cost the application's threads (the tracer's callbacks)
    host_ns: int = 0        # all of it
    stack_ns: int = 0       # unwinding native stacks
    python_ns: int = 0      # walking Python frames
    stacks: int = 0         # native stacks taken
    stacks_slow: int = 0    # of which by backtrace() (a full DWARF unwind)
    stacks_reused: int = 0  # of which finished from a previous stack
    slow_frame: str = ""    # the first frame that sent one to backtrace()
    stream_full: bool = False  # the streamed timeline stopped at max_size


@dataclass(frozen=True)
class TraceKernel:
    """One kernel (by name) of a trace: its executions, their GPU time, and
    the CPU call path ("main;f;cudaLaunchKernel") with the most of it."""
    name: str
    launches: int
    gpu_ns: int
    hottest_path: str   # "" when no launch was joined
    hottest_ns: int


class Trace:
    """A trace of the process's kernel launches, copies and sets, started
    at construction. ``max_frames``: host frames kept per launch (0: the
    library's default); ``copies``: record memcpy and memset too;
    ``buffer_size``: bytes per CUPTI activity buffer (0: default);
    ``python``: Python frames in place of the interpreter's (CPython
    3.10-3.13); ``last``: a flight recorder, keeping only the last
    ``last`` seconds of the trace (0: all of it; ``egpu trace --last``).
    ``stream``: a path the Perfetto timeline is written to while the
    trace runs, so its memory stays bounded whatever the run's length (the
    trace then keeps totals: every format but "chrome"/"json"; not with
    ``last``); ``max_size``: bytes per file of it (at least 64 KiB), where
    it stops, or with ``rotate=N`` rotates keeping N files (``stream`` the
    newest, then STEM.1.EXT, ...; ``egpu trace --max-size --rotate``)."""

    _h = None  # also for __del__ when __init__ never ran
    _stopped = False

    def __init__(self, max_frames=0, copies=True, buffer_size=0, python=True,
                 last=0.0, stream=None, max_size=0, rotate=0):
        if not last >= 0:  # also NaN
            raise ValueError("last must be a number of seconds, not negative")
        self._h = _c.egpu_trace_start(dict(
            max_frames=max_frames, no_copies=not copies,
            buffer_size=buffer_size, no_python=not python,
            keep_ns=round(last * 1e9),
            stream_path=None if stream is None else os.fspath(stream),
            max_size=max_size, max_files=rotate))

    def _live(self):
        if self._h is None:
            raise InvalidArgument("the trace is closed")
        return self._h

    def _done(self):
        if not self._stopped:
            raise InvalidArgument("the trace is still running: stop() it first")
        return self._live()

    def stop(self):
        """Stop recording: waits for the GPU's work, then joins launches
        to kernels. Idempotent."""
        if not self._stopped:
            _c.egpu_trace_stop(self._live())
            self._stopped = True

    def close(self):
        """Free the trace (stopping it first); idempotent."""
        if self._h is not None:
            _c.egpu_trace_free(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._h is not None:
            self.stop()

    def __del__(self):
        self.close()

    def write(self, path, format=None):
        """Write the stopped trace to ``path`` as ``format``: "perfetto"
        (Perfetto's binary timeline), "chrome" or "json" (the JSON one),
        "folded", "svg", "summary" or "pprof" (a gzip'd pprof profile of
        GPU time by CPU stack); by default from the suffix
        (.perfetto-trace, .json, .folded, .svg, .txt, .pb.gz or .pprof)."""
        path = os.fspath(path)
        if format is None:
            format = _BY_SUFFIX.get(os.path.splitext(path)[1])
            if format is None:
                raise InvalidArgument(f"{path}: say the format, or use one of "
                                      f"{', '.join(_BY_SUFFIX)}")
        if format == "pprof":
            _c.trace_write_pprof(self._done(), path, 0)
            return
        if format not in _FORMATS:
            raise InvalidArgument(f"trace format {format!r}: expected one of "
                                  f"{', '.join(_FORMATS)}, pprof")
        _c.egpu_trace_write(self._done(), _FORMATS[format], path)

    def summary(self):
        """The text table: top kernels, launches, hottest call paths."""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "summary.txt")
            self.write(path, "summary")
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()

    @property
    def stats(self):
        return TraceStats(**_c.trace_stats(self._done()))

    @property
    def kernels(self):
        """TraceKernels, most GPU time first."""
        return [TraceKernel(**k) for k in _c.trace_kernels(self._done())]

    def __repr__(self):
        state = ("closed" if self._h is None else
                 "stopped" if self._stopped else "running")
        return f"<egpu.Trace {state}>"
