# SPDX-License-Identifier: MIT
"""libegpu for Python: load eBPF objects, read and write their maps, run
their programs on the CPU or a GPU, and splice them into CUDA kernels.

    import egpu

    with egpu.Context() as ctx:
        obj = ctx.load("probe.bpf.o")
        obj.attach_all()
        ptx, report = ctx.instrument(kernels_ptx)   # or ctx.module_load()
        ...launch...
        print(dict(obj.maps["counts"]))

Every failure raises an egpu.Error subclass carrying the library's message.
"""

import os
from dataclasses import dataclass
from types import MappingProxyType

from . import _egpu as _c
from ._clock import Clock
from ._errors import (Busy, CudaError, Error, Exists, FormatError, Full,
                      IOFailure, InvalidArgument, JitError, NoDevice, NoMemory,
                      NotFound, NotSupported, VerifyError)
from ._events import (RingBuffer, SpanInfo, WarpAccess, decode_span,
                      read_record_file, span_addresses)
from ._spans import (ACCESS, AFFINE_RECORD, SPAN_HEADER, decode_spans,
                     record_file_body, span_slots)
from ._helpers import signature_of
from ._maps import ANY, EXIST, NOEXIST, Map
from ._trace import Trace, TraceKernel, TraceStats

__all__ = [
    "Context", "Object", "Program", "Map", "RingBuffer", "Link", "Report",
    "KernelReport", "KernelInfo", "MemSite", "Verification", "Clock", "Trace", "TraceStats",
    "TraceKernel", "SpanInfo", "WarpAccess", "decode_span", "read_record_file", "span_addresses",
    "decode_spans", "record_file_body", "span_slots", "ACCESS", "AFFINE_RECORD", "SPAN_HEADER",
    "gpu_available", "gpu_unavailable_reason", "version",
    "Error", "InvalidArgument", "NoMemory", "IOFailure", "FormatError",
    "VerifyError", "JitError", "NoDevice", "NotFound", "Full", "CudaError",
    "NotSupported", "Exists", "Busy",
    "ANY", "NOEXIST", "EXIST", "LOG_ERROR", "LOG_WARN", "LOG_INFO",
    "LOG_DEBUG", "HELPERS_GPU", "HELPERS_CONFORMANCE", "MEM_KERNEL_SHARED",
    "MEM_SPACES", "MEM_KINDS", "HELPER_USER_MIN", "HELPER_USER_MAX",
]

__version__ = _c.egpu_version()

LOG_ERROR = _c.EGPU_LOG_ERROR
LOG_WARN = _c.EGPU_LOG_WARN
LOG_INFO = _c.EGPU_LOG_INFO
LOG_DEBUG = _c.EGPU_LOG_DEBUG
HELPERS_GPU = _c.EGPU_HELPERS_GPU
HELPERS_CONFORMANCE = _c.EGPU_HELPERS_CONFORMANCE
# The helper numbers left to applications (Context.register_helper).
HELPER_USER_MIN = _c.EGPU_HELPER_USER_MIN
HELPER_USER_MAX = _c.EGPU_HELPER_USER_MAX

_ATTACH_POINTS = {"none": _c.EGPU_ATTACH_NONE, "entry": _c.EGPU_ATTACH_ENTRY,
                  "exit": _c.EGPU_ATTACH_EXIT, "mem": _c.EGPU_ATTACH_MEM}
_BACKENDS = {"cpu": _c.EGPU_BACKEND_CPU, "gpu": _c.EGPU_BACKEND_GPU}
# Names of the state spaces and access kinds of memory probes (EGPU_SPACE_*,
# EGPU_MEM_* of <egpu/ctx.h>).
_SPACES = {"generic": _c.EGPU_SPACE_GENERIC, "global": _c.EGPU_SPACE_GLOBAL,
           "shared": _c.EGPU_SPACE_SHARED, "local": _c.EGPU_SPACE_LOCAL,
           "const": _c.EGPU_SPACE_CONST, "param": _c.EGPU_SPACE_PARAM}
_MEM_KINDS = {"load": _c.EGPU_MEM_LOAD, "store": _c.EGPU_MEM_STORE,
              "atomic": _c.EGPU_MEM_ATOMIC, "async": _c.EGPU_MEM_ASYNC}
_SPACE_NAMES = {v: k for k, v in _SPACES.items()}
_MEM_KIND_NAMES = {v: k for k, v in _MEM_KINDS.items()}
# The names, and the values memory probes see in ctx->space and ctx->kind.
MEM_SPACES = MappingProxyType(_SPACES)
MEM_KINDS = MappingProxyType(_MEM_KINDS)
# MemSite.kernel_id of an access in a .func that several kernels call.
MEM_KERNEL_SHARED = _c.EGPU_MEM_KERNEL_SHARED


def version():
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _c.egpu_version()


def gpu_available():
    """Whether a CUDA driver and at least one GPU are usable."""
    return bool(_c.egpu_gpu_available())


def gpu_unavailable_reason():
    """Why no GPU is usable, or "" when one is."""
    return "" if _c.egpu_gpu_available() else _c.egpu_errmsg()


def _choice(value, names, what, numbers=True):
    if isinstance(value, str) or not numbers:
        try:
            return names[value]
        except (KeyError, TypeError):
            raise InvalidArgument(f"{what} {value!r}: expected one of "
                                  f"{', '.join(names)}") from None
    return int(value)


def _mask(selection, names, what):
    """The mask (bit 1 << value) of the names in ``selection`` (a name or
    an iterable of names); 0, which selects every one, for None."""
    if selection is None:
        return 0
    if isinstance(selection, str):
        selection = (selection,)
    mask = 0
    for name in selection:
        mask |= 1 << _choice(name, names, what, numbers=False)
    if not mask:
        raise InvalidArgument(f"{what}: an empty selection (None selects "
                              f"every one of {', '.join(names)})")
    return mask


@dataclass(frozen=True)
class KernelReport:
    """What instrumentation did to one kernel."""
    name: str           # mangled, as in the PTX
    demangled: str
    kernel_id: int      # the kernel_id probes see in their ctx
    entry_points: int
    exit_points: int
    programs: int
    inlined: int        # probe bodies copied in (not called)
    mem_points: int     # memory instructions probed, in the kernel and
                        # the .funcs it calls


@dataclass(frozen=True)
class KernelInfo:
    """A kernel the context instrumented (struct egpu_kernel_info)."""
    kernel_id: int      # unique in the context; the same for the same
                        # kernel of the same module text
    name: str           # mangled, as in the PTX
    demangled: str
    module: int         # index of its module text in the context
    module_hash: int    # FNV-1a hash of that text
    index: int          # position among the module's kernels


@dataclass(frozen=True)
class MemSite:
    """A memory instruction that memory probes run before (struct
    egpu_mem_site); its index in Report.mem_sites is the probes'
    ctx->site."""
    site: int
    kernel_id: int      # as the probes' ctx->kernel_id; MEM_KERNEL_SHARED
                        # for a .func several kernels call
    function: str       # the .entry or .func holding it
    text: str           # the instruction, as in the PTX
    ptx_line: int       # its line in the input PTX (1-based)
    line: int           # source line from .loc, 0 without one
    file: object        # source file from .file (str), None without one
    size: int           # bytes accessed, 0 if only known at run time
    kind: str           # one of MEM_KINDS: "load", "store", ...
    space: str          # one of MEM_SPACES: "global", "shared", ...

    @classmethod
    def _from_dict(cls, d):
        return cls(**dict(d, kind=_MEM_KIND_NAMES.get(d["kind"], d["kind"]),
                          space=_SPACE_NAMES.get(d["space"], d["space"])))


@dataclass(frozen=True)
class Report:
    """Summary of one instrumentation (struct egpu_report)."""
    kernel_cnt: int
    kernels_patched: int
    entry_points: int
    exit_points: int
    programs: int
    instrument_ms: float
    kernels: tuple      # KernelReport per kernel
    mem_sites: tuple    # MemSite per memory instruction probed
    warnings: tuple     # attachments whose pattern matched no kernel
    mem_called: int     # memory probes called past Context's mem_inline_limit

    @classmethod
    def _from_dict(cls, d):
        kernels = tuple(KernelReport(**k) for k in d.pop("kernels"))
        sites = tuple(MemSite._from_dict(s) for s in d.pop("mem_sites"))
        warnings = tuple(d.pop("warnings"))
        return cls(kernels=kernels, mem_sites=sites, warnings=warnings, **d)


@dataclass(frozen=True)
class Verification:
    """What the verifier said of a program (Program.verify())."""
    accepted: bool
    message: str        # the refusal, naming the instruction ("" if accepted)
    log: str            # the report; with verbose, the failing path
    insns_processed: int
    states: int
    verify_ms: float

    def __bool__(self):
        return self.accepted


#: Context(mem_inline_limit=...): copy memory probes into every site.
MEM_INLINE_UNLIMITED = 2**64 - 1


class Context:
    """A library context: owns the objects loaded into it, their maps and
    attachments, and (once a GPU call needs it) the CUDA context binding.

    sm: PTX target ("sm_90" by default). offline: instrument for inspection
    only, without a GPU (maps get placeholder addresses; module_load and GPU
    runs are refused). thread_slots: per-thread map slots on the GPU (0: the
    library's default). log: callable(level, message) receiving the
    library's log (default: stderr), up to log_level. no_inline: call
    probes from their sites instead of copying their bodies in.
    mem_inline_limit: bytes of copies of one memory probe a module may
    receive, past which the functions with the most sites call it (0: the
    module's size, at least 16 MiB; MEM_INLINE_UNLIMITED: no bound).
    """

    def __init__(self, sm=None, offline=False, thread_slots=0, log=None,
                 log_level=LOG_WARN, no_inline=False, mem_inline_limit=0):
        self._h = None
        self._log = log  # the C context calls it: keep it alive
        self._on_print = None  # likewise
        self._helpers = []  # registered callables: alive as long as the C context
        self._objects = []
        self._mem_trace_ring = None  # mem_trace()'s ring, kept open
        self._h = _c.egpu_ctx_new(dict(sm=sm, offline=offline,
                                       thread_slots=thread_slots, log=log,
                                       log_level=log_level,
                                       no_inline=no_inline,
                                       mem_inline_limit=mem_inline_limit))
        self.sm = sm or "sm_90"
        self.offline = offline

    def _live(self):
        if self._h is None:
            raise InvalidArgument("the egpu context is closed")
        return self._h

    def close(self):
        """Free the context and everything loaded into it; idempotent."""
        if self._h is None:
            return
        for obj in self._objects:
            obj._close_rings()
            obj._h = None
        self._objects.clear()
        _c.egpu_ctx_free(self._h)  # makes the GPU calls still queued
        self._h = None
        self._helpers.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def load(self, source, name=None, helpers=HELPERS_GPU, strict=False):
        """Load an eBPF ELF object from a path (str or os.PathLike) or from
        its bytes (any bytes-like object). ``name`` names it in messages;
        ``helpers``: HELPERS_GPU or HELPERS_CONFORMANCE. A program the
        verifier refuses keeps its verdict (Program.verdict) and the object
        loads; ``strict`` makes the whole load fail instead."""
        opts = dict(name=name, helpers=helpers, strict=strict)
        if isinstance(source, (str, os.PathLike)):
            source = os.fsdecode(source)
            h = _c.egpu_load(self._live(), source, opts)
        else:
            h = _c.egpu_load_mem(self._live(), source, opts)
            source = bytes(memoryview(source))
        obj = self._adopt(h)
        obj._load_args = (source, name, helpers)  # to load it again elsewhere
        return obj

    def load_insns(self, insns, name=None, helpers=HELPERS_GPU):
        """Load raw instructions (8 bytes each, little-endian) as an object
        with one program named "prog"."""
        h = _c.egpu_load_insns(self._live(), insns,
                               dict(name=name, helpers=helpers))
        return self._adopt(h)

    def _adopt(self, h):
        obj = Object(self, h)
        self._objects.append(obj)
        return obj

    def instrument(self, ptx):
        """Splice every attached program into PTX module text (str or
        bytes). Returns (instrumented PTX, Report)."""
        out, report = _c.egpu_instrument_ptx(self._live(), ptx)
        return out, Report._from_dict(report)

    def mem_trace(self, ring, kernel=None, spaces=None, kinds=None,
                  max_registers=None, runtime_max_registers=0):
        """Record every memory access of the kernels matching ``kernel``
        (as Program.attach names them; None: every kernel) in the spans of
        ``ring``, a ring map of an object of this context that stays open,
        in every module instrument() or module_load() handles from now on:
        the splicer's trace mode, no probe program (docs/events.md). The
        accesses of the state ``spaces`` (names of MEM_SPACES; None:
        "global") and ``kinds`` (names of MEM_KINDS; None: all). Each
        traced kernel keeps the registers that hold its untraced occupancy
        (``max_registers`` None), at most ``max_registers``, or as many as
        ptxas takes ("any"); ``runtime_max_registers`` is the device
        runtime's when module_load() compiles it apart (0: 32; negative:
        one module). Decode the ring's records with decode_spans()."""
        if max_registers == "any":
            max_registers = _c.EGPU_MAX_REGISTERS_ANY
        elif max_registers is None:
            max_registers = 0
        elif not isinstance(max_registers, int) or not 0 < max_registers < 256:
            raise InvalidArgument(f"max_registers {max_registers!r}: expected "
                                  "None, \"any\" or 1 to 255")
        opts = dict(kernel=kernel,
                    mem_spaces=_mask(spaces, _SPACES, "memory space"),
                    mem_kinds=_mask(kinds, _MEM_KINDS, "memory access kind"),
                    max_registers=max_registers,
                    runtime_max_registers=runtime_max_registers)
        _c.egpu_mem_trace_enable(self._live(), ring._handle(), opts)
        self._mem_trace_ring = ring

    def module_load(self, image):
        """Instrument PTX ``image`` and load it into the current CUDA context
        (CUDA's primary context if none is current). Returns the CUmodule
        handle as an int, e.g. for cuda-python's ``cuda.CUmodule(handle)``."""
        return _c.egpu_module_load(self._live(), image)

    def on_print(self, callback):
        """Send the lines GPU threads print (bpf_printk, bpf_trace_printk,
        ...) to ``callback(line, block, thread)``, block and thread being
        (x, y, z) tuples; None sends them back to the log. Lines arrive
        when print_poll() (or a ring buffer's poll) runs. Programs run on
        the CPU print to stderr directly."""
        _c.print_set_callback(self._live(), callback)
        self._on_print = callback

    def print_poll(self, timeout=0):
        """Deliver the lines printed since the last call, first waiting up
        to ``timeout`` seconds (None: without limit) when there are none
        (not at all when no probe prints). Returns how many."""
        return _c.print_poll(self._live(), -1 if timeout is None or timeout < 0
                             else int(timeout * 1000))

    def register_helper(self, id, fn, signature=None, name=None):
        """Make callable ``fn`` helper number ``id`` (HELPER_USER_MIN to
        HELPER_USER_MAX) of this context: objects loaded from now on may
        call it, e.g. ``static long (*on_nan)(__u64, __u64) = (void
        *)0x10000;``. ``signature`` ("void (u64, const u8[16])", see
        docs/helpers.md) defaults to the one of ``fn``'s annotations: int
        is u64, Annotated[bytes, N] const u8[N], Annotated[bytearray, N]
        u8[N], a None return void. Programs run on the CPU call ``fn``
        synchronously; GPU calls are queued and made later on the
        context's dispatcher thread (or in helper_poll()), under the GIL.
        What ``fn`` raises goes to sys.unraisablehook and the call returns
        0. ``name`` (default fn.__name__) names it in messages. Returns
        ``fn``."""
        sig = signature if signature is not None else signature_of(fn)
        name = name if name is not None else getattr(fn, "__name__", "")
        self._helpers.append(_c.helper_register(self._live(), id, name, sig, fn))
        return fn

    def helper(self, id, signature=None, name=None):
        """register_helper() as a decorator: ``@ctx.helper(0x10000)``."""
        return lambda fn: self.register_helper(id, fn, signature, name)

    def helper_dispatch(self, thread=True):
        """Who makes the calls GPU threads queue: a thread of the context
        (True, the default) or the application, in helper_poll()."""
        _c.helper_dispatch(self._live(), _c.EGPU_DISPATCH_THREAD if thread
                           else _c.EGPU_DISPATCH_POLL)

    def helper_poll(self, timeout=0):
        """Make the calls GPU threads queued, first waiting up to
        ``timeout`` seconds (None: without limit) when there are none.
        Returns how many."""
        return _c.helper_poll(self._live(), -1 if timeout is None or timeout < 0
                              else int(timeout * 1000))

    @property
    def helper_drops(self):
        """GPU calls dropped because the call ring was full."""
        return _c.egpu_helper_drops(self._live())

    def clock_sync(self):
        """Calibrate the GPU's %globaltimer against the host's
        CLOCK_MONOTONIC now (a launch and 64 round trips; binds the
        context to the current CUDA context as any first GPU use does).
        Returns a Clock. Raises NoDevice without a GPU, InvalidArgument
        for an offline context, Busy when the GPU did not run the
        calibration kernel within half a second."""
        return Clock(**_c.egpu_clock_sync(self._live()))

    def clock(self):
        """The last calibration (made when the context first used the GPU,
        or by clock_sync()), calibrating now when there is none."""
        return Clock(**_c.egpu_clock_get(self._live()))

    def kernel(self, kernel_id):
        """The KernelInfo of ``kernel_id`` (egpu.NotFound if the context
        never gave it)."""
        return KernelInfo(**_c.kernel_info(self._live(), kernel_id))

    @property
    def kernels(self):
        """Every kernel the context instrumented, by id (KernelInfo)."""
        h = self._live()
        return tuple(KernelInfo(**_c.kernel_info(h, i))
                     for i in range(_c.egpu_kernel_cnt(h)))

    @property
    def print_drops(self):
        """Lines dropped because the print ring was full."""
        return _c.egpu_print_drops(self._live())

    @property
    def objects(self):
        """The open objects, in load order."""
        return tuple(self._objects)

    def __repr__(self):
        state = "closed" if self._h is None else f"{len(self._objects)} objects"
        return f"<egpu.Context {self.sm}{' offline' if self.offline else ''}, {state}>"


class _Named:
    """An object's programs or maps: a list that is also indexed by name."""

    def __init__(self, items, lookup):
        self._items = tuple(items)
        self._by_name = {i.name: i for i in self._items}
        self._lookup = lookup

    def __getitem__(self, key):
        if isinstance(key, str):
            if key not in self._by_name:
                self._lookup(key)  # raises NotFound with the library's text
            return self._by_name[key]
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __contains__(self, key):
        return key in self._by_name if isinstance(key, str) else key in self._items

    def keys(self):
        return self._by_name.keys()

    def items(self):
        return self._by_name.items()

    def __repr__(self):
        return repr(list(self._items))


class Object:
    """A loaded eBPF object: ``programs`` and ``maps`` are lists also
    indexed by name (``obj.programs["count"]``, ``obj.maps["counts"]``)."""

    def __init__(self, ctx, h):
        self._ctx = ctx
        self._h = h
        self._rings = []  # RingBuffers of its maps, closed before it
        self._load_args = None  # (source, name, helpers) of Context.load
        self.name = _c.egpu_obj_name(h)
        progs, maps = [], []
        p = _c.egpu_obj_next_prog(h, None)
        while p is not None:
            progs.append(Program(self, p))
            p = _c.egpu_obj_next_prog(h, p)
        m = _c.egpu_obj_next_map(h, None)
        while m is not None:
            maps.append(Map(self, m))
            m = _c.egpu_obj_next_map(h, m)
        self.programs = _Named(progs, lambda n: _c.egpu_obj_prog(self._live(), n))
        self.maps = _Named(maps, lambda n: _c.egpu_obj_map(self._live(), n))

    def _live(self):
        self._ctx._live()
        if self._h is None:
            raise InvalidArgument(f"egpu object {self.name!r} is closed")
        return self._h

    @property
    def closed(self):
        return self._h is None or self._ctx._h is None

    def attach_all(self):
        """Attach every program whose section names an attach point
        (gpu/entry/K, gpu/exit/K, kprobe/K, ...). Returns how many."""
        return _c.egpu_attach_all(self._live())

    def close(self):
        """Close the object, its programs, maps and attachments."""
        if self.closed:
            return
        self._ctx._objects.remove(self)
        self._close_rings()
        _c.egpu_obj_close(self._h)
        self._h = None

    def _close_rings(self):
        for rb in list(self._rings):
            rb.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"<egpu.Object {self.name!r}: programs "
                f"{list(self.programs.keys())}, maps {list(self.maps.keys())}>")


class Program:
    """A program of an object: name, section, attach_point ("none",
    "entry", "exit" or "mem"), kernel (name or glob from the section),
    insn_cnt and insns (the linked instructions)."""

    def __init__(self, obj, h):
        self._obj = obj
        self._h = h
        self.name = _c.egpu_prog_name(h)
        self.section = _c.egpu_prog_section(h)
        self.attach_point = _c.egpu_attach_point_str(_c.egpu_prog_attach_point(h))
        self.kernel = _c.egpu_prog_kernel(h)
        self.insn_cnt = _c.egpu_prog_insn_cnt(h)
        self.last_run_ns = None

    def _handle(self):
        self._obj._live()
        return self._h

    @property
    def insns(self):
        return _c.prog_insns(self._handle())

    @property
    def verdict(self):
        """The verifier's verdict at load: (True, "") if accepted (or, for
        a program without an attach point, not checked until run), else
        (False, the refusal naming the instruction and source line)."""
        code, message = _c.prog_verdict(self._handle())
        return code == 0, message

    def verify(self, at=None, ctx_len=0, verbose=0):
        """Run the verifier for attach point ``at`` (default: the
        program's own; "none" with ``ctx_len`` bytes for a direct run) and
        return a Verification: accepted, message, log (the last steps of a
        failing path; every step with ``verbose`` 1, every path with 2),
        insns_processed, states, verify_ms."""
        where = -1 if at is None else _choice(at, _ATTACH_POINTS, "attach point")
        return Verification(*_c.prog_verify(self._handle(), where, ctx_len, verbose))

    def attach(self, kernel=None, at=None, spaces=None, kinds=None, strict=False):
        """Attach to every kernel matching ``kernel`` (mangled or demangled
        name, or a glob) at ``at`` ("entry", "exit" or "mem"); both default
        to the program's section. A memory probe ("mem") runs before the
        accesses of the state ``spaces`` (names of MEM_SPACES: "global",
        "shared", ...) and the ``kinds`` (names of MEM_KINDS: "load",
        "store", ...) given, a name or an iterable of names; None: all.
        Takes effect at the next instrument() or module_load() of the
        context; where ``kernel`` matches no kernel of a module, the
        Report's warnings say so, or with ``strict`` the instrumentation
        fails. Returns a Link."""
        kernel = self.kernel if kernel is None else kernel
        at = _choice(self.attach_point if at is None else at, _ATTACH_POINTS,
                     "attach point")
        opts = dict(mem_spaces=_mask(spaces, _SPACES, "memory space"),
                    mem_kinds=_mask(kinds, _MEM_KINDS, "memory access kind"),
                    strict=strict)
        link = _c.egpu_attach_kernel(self._handle(), kernel, at, opts)
        return Link(self, link, kernel, at)

    def run(self, memory=b"", backend="cpu", params=None):
        """Run once with ``memory`` as the program's r1/r2 (a writable
        buffer such as a bytearray sees the program's stores; bytes are
        copied) on backend "cpu" or "gpu". An entry or exit probe runs on
        the CPU with ``params`` (bytes) as its kernel's parameter bytes
        (``ctx->params``, ``bpf_egpu_read_param``), no ``memory``. Returns
        r0; the execution time in ns is left in ``last_run_ns``."""
        r0, ns = _c.prog_run(self._handle(), _choice(backend, _BACKENDS, "backend"),
                             memory, params)
        self.last_run_ns = ns
        return r0

    def jit_ptx(self, sm=None, func=None, kernel=False, ctx_len=0):
        """The program as PTX: a ``.visible .func`` named ``func`` (default
        egpu_prog_NAME) taking (ctx, ctx_len) and returning r0, and with
        ``kernel`` also a one-thread ``.entry`` FUNC_kernel. ``ctx_len``:
        for a program without an attach point, the bytes its r1 points to."""
        return _c.egpu_prog_jit_ptx(self._handle(),
                                    dict(sm=sm, func=func, kernel=kernel,
                                         ctx_len=ctx_len))

    def __repr__(self):
        where = f" {self.attach_point} {self.kernel!r}" if self.kernel else ""
        return f"<egpu.Program {self.name!r} [{self.section}]{where}, {self.insn_cnt} insns>"


class Link:
    """An attachment of a program to kernels; detach() removes it (closing
    the program's object removes it too)."""

    def __init__(self, prog, h, kernel, at):
        self._prog = prog
        self._h = h
        self.program = prog.name
        self.kernel = kernel
        self.at = _c.egpu_attach_point_str(at)

    def detach(self):
        if self._h is not None and not self._prog._obj.closed:
            _c.egpu_link_destroy(self._h)
        self._h = None

    def __repr__(self):
        return f"<egpu.Link {self.program} at {self.at} of {self.kernel!r}>"
