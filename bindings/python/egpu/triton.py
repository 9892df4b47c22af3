# SPDX-License-Identifier: MIT
"""Instrument every Triton kernel compiled in the process: Triton's own
``@triton.jit`` kernels and those torch.compile (inductor) makes.

    obj = egpu.Context().load("count.bpf.o"); obj.attach_all()
    with egpu.triton.instrument(obj) as inst:
        model(x)
    print(obj.maps["counts"].by_kernel())

Triton hands the PTX of every kernel it compiles to a hook on its ``ptx``
compile stage (``triton.knobs.runtime.add_stages_inspection_hook``); the
hook gives it to libegpu, and Triton's own ptxas assembles the result.
Each device gets its libegpu context (maps live in one CUDA context): the
object given serves the device current at instrument(), others get the same
object loaded again into a context of their own, attached by ``attach``.

What would hide kernels from the hook, or mix instrumented and plain
binaries, is dealt with while instrumenting:

- Triton's caches: the hook's cache key holds a token unique to this
  instrumentation and the device compiled for, and Triton compiles every
  kernel again while instrumenting (``always_compile``: Triton 3.6 keys
  its disk cache without the hook's key), so it never hands back a plain
  binary, an instrumented one of another session (whose maps are gone)
  or of another device (whose map addresses are not this device's);
  instrumented binaries go to a temporary cache directory, removed at the
  end; the in-memory kernel caches of every @triton.jit function are
  emptied on both sides.
- inductor: compile workers in other processes never see the hook, so
  ``compile_threads`` is 1; its FX graph and AOT autograd caches (which
  can carry compiled binaries) are off; graphs compiled before are
  dropped (``torch._dynamo.reset()``) so they compile again, instrumented,
  and dropped again at the end, so no instrumented kernel runs after it.
- autotuning compiles every configuration through the hook: every one is
  instrumented, and its benchmark launches run the probes too.

``probe`` may also be a bare egpu.Context (no programs): then only what
the context does to every kernel runs, e.g. egpu.memcheck.Checker's check,
and only on the device current at instrument().

``on_launch(metadata)`` is called before every launch of a Triton kernel
(Triton's ``knobs.runtime.launch_enter_hook``; inductor's launcher calls
it too, its static launcher off meanwhile): egpu.memcheck.Checker
learns there of the memory PyTorch allocated since the last launch, and of
the variables of the kernel's module (``Instrumentation.ptx``: the
instrumented PTX of each kernel name, kept while on_launch is given).

Needs Triton 3.4 or newer (the hook's cache-key protocol); tested with 3.6.
"""
import hashlib
import shutil
import sys
import tempfile
import threading
import uuid

from . import Context
from ._errors import NotSupported
from ._single import Single

_single = Single("egpu.triton")


def _triton():
    try:
        import triton
        from triton import knobs
    except ImportError as e:
        raise NotSupported(f"egpu.triton: Triton is not importable ({e})") from e
    version = getattr(triton, "__version__", "unknown")
    try:
        major, minor = (int(x) for x in version.split(".")[:2])
    except ValueError:
        major = minor = 0
    if (major, minor) < (3, 4) or not hasattr(knobs.runtime,
                                              "add_stages_inspection_hook"):
        raise NotSupported(
            f"egpu.triton needs Triton 3.4 or newer (its compile-stage hook "
            f"knobs.runtime.add_stages_inspection_hook); this is Triton {version}")
    return triton, knobs


def _inductor_settings(launch_hook=False):
    """(module, attribute, value while instrumenting) for torch, if
    imported; ``launch_hook``: inductor's launches must all go through
    Triton's launcher, which calls the launch hook, so its static
    launcher is off."""
    if "torch" not in sys.modules:
        return []
    try:
        import torch._functorch.config as functorch_config
        import torch._inductor.config as inductor_config
    except ImportError:
        return []
    wanted = [(inductor_config, "compile_threads", 1),
              (inductor_config, "fx_graph_cache", False),
              (inductor_config, "fx_graph_remote_cache", False),
              (functorch_config, "enable_autograd_cache", False)]
    if launch_hook:
        wanted.append((inductor_config, "use_static_cuda_launcher", False))
    return [w for w in wanted if hasattr(w[0], w[1])]


def _drop_compiled_graphs():
    """Forget what torch.compile compiled, so nothing compiled on one side
    of an instrumentation runs on the other."""
    if "torch" not in sys.modules:
        return
    import torch
    torch._dynamo.reset()
    try:
        from torch._inductor.async_compile import CompiledTritonKernels
        CompiledTritonKernels.cache_clear()
    except (ImportError, AttributeError):
        pass
    try:
        from torch._inductor.codecache import PyCodeCache
        PyCodeCache.cache_clear(purge=False)
    except (ImportError, AttributeError, TypeError):
        pass


def _drop_jit_caches(triton):
    """Empty the in-memory kernel caches of every @triton.jit function, so
    that no kernel compiled on one side of an instrumentation is launched on
    the other. Triton 3.6's JITFunction.run keys its per-device cache
    (``device_caches[device][0]``) by specialization and options only, and
    its compile() keys the disk cache without the stage hook (which only
    the backend's add_stages calls): a kernel compiled before instrument()
    would run plain inside it. Objects are told apart by type(), never
    isinstance(): the heap holds dead weak proxies (isinstance raises
    ReferenceError) and lazy modules (their __class__ lookups warn)."""
    import gc
    jit = getattr(getattr(triton, "runtime", None), "JITFunction", None)
    if not isinstance(jit, type):
        return
    for fn in gc.get_objects():
        if issubclass(type(fn), jit):
            caches = fn.__dict__.get("device_caches")
            if caches is not None:
                caches.clear()


class Instrumentation:
    """An active instrumentation (see egpu.triton.instrument()). Undo it
    with undo() or by leaving its ``with`` block; its contexts stay open
    (their maps readable) until close()."""

    def __init__(self, probe, attach=None, cache_dir=None, on_launch=None):
        self._triton, self._knobs = _triton()
        self._on_launch = on_launch
        self._attach = attach or (lambda o: o.attach_all())
        self._lock = threading.Lock()
        self._own = []             # contexts made here, closed by close()
        self.objects = {}          # device -> Object
        self.kernels = []          # (device, KernelReport) per kernel compiled
        self.ptx = {}              # with on_launch: kernel name -> [its modules' PTX]
        self.instrument_ms = []    # libegpu's time per module instrumented
        self._probe = probe
        self._key = f"egpu-{uuid.uuid4().hex}"
        self._cache_dir = cache_dir
        self._tmp = None
        self._saved = []
        self._prev_hook = None
        self._installed = False

    # -- install / undo -------------------------------------------------

    def _install(self):
        knobs = self._knobs
        self._installed = True
        device = self._triton.runtime.driver.active.get_current_device()
        self.objects[device] = self._probe
        self._set(knobs.runtime, "add_stages_inspection_hook", self._hook)
        self._prev_hook = self._saved[-1][2]
        if self._cache_dir is None:
            self._tmp = self._cache_dir = tempfile.mkdtemp(prefix="egpu-triton-")
        self._set(knobs.cache, "dir", self._cache_dir)
        # Triton 3.6 keys its disk cache without the hook's key: a binary
        # compiled for one device (its map addresses baked in) would be
        # handed to the next device's compile. Compile every time instead.
        compilation = getattr(knobs, "compilation", None)
        if hasattr(compilation, "always_compile"):
            self._set(compilation, "always_compile", True)
        for mod, name, value in _inductor_settings(self._on_launch is not None):
            self._set(mod, name, value)
        if self._on_launch is not None:
            self._add_launch_hook()
        _drop_compiled_graphs()
        _drop_jit_caches(self._triton)

    def _set(self, owner, name, value):
        self._saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def _add_launch_hook(self):
        """on_launch before every launch: Triton 3.5+ chains launch hooks
        (``add``/``remove``); before, the knob holds one, which is chained
        by hand."""
        runtime = self._knobs.runtime
        chain = getattr(runtime, "launch_enter_hook", None)
        if hasattr(chain, "add") and hasattr(chain, "remove"):
            chain.add(self._on_launch)
            self._saved.append((None, chain.remove, self._on_launch))
            return
        prev, mine = chain, self._on_launch

        def enter(metadata):
            mine(metadata)
            if prev is not None:
                prev(metadata)
        self._set(runtime, "launch_enter_hook", enter)

    def undo(self):
        """Stop instrumenting: Triton and inductor as they were, nothing
        compiled while instrumenting runs again. Idempotent."""
        if not self._installed:
            return
        self._installed = False
        try:
            for owner, name, value in reversed(self._saved):
                if owner is None:  # an undo call: name(value)
                    name(value)
                else:
                    setattr(owner, name, value)
            self._saved.clear()
            _drop_compiled_graphs()
            _drop_jit_caches(self._triton)
        finally:  # whatever failed, this instrumentation is over
            if self._tmp:
                shutil.rmtree(self._tmp, ignore_errors=True)
                self._tmp = None
            _single.end(self)

    def close(self):
        """undo(), then free the contexts made for other devices."""
        self.undo()
        for ctx in self._own:
            ctx.close()
        self._own.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.undo()

    # -- the hook -------------------------------------------------------

    def _cache_key(self):
        """This instrumentation's part of a kernel's cache key, for the
        device compiling it now: binaries carry their device's map
        addresses."""
        device = self._triton.runtime.driver.active.get_current_device()
        key = f"{self._key}-device{device}"
        return key, hashlib.sha256(key.encode()).hexdigest()

    def _hook(self, *args):
        prev = self._prev_hook
        if not args:  # Triton asks for the pipeline's cache key
            key, digest = self._cache_key()
            if prev is None:
                return key, digest
            prev_key, prev_digest = prev()
            return prev_key + key, prev_digest + digest
        if prev is not None:
            prev(*args)
        stages = args[1]
        if "ptx" in stages:
            stages["ptx"] = self._wrap(stages["ptx"])
        return None

    def _wrap(self, make_ptx):
        def ptx_stage(src, metadata):
            return self._instrument(make_ptx(src, metadata))
        return ptx_stage

    def _object(self, device):
        obj = self.objects.get(device)
        if obj is None:
            if isinstance(self._probe, Context):
                raise NotSupported("egpu.triton: a kernel compiles for device "
                                   f"{device}; a bare context serves only the "
                                   "device current at instrument()")
            if self._probe._load_args is None:
                raise NotSupported("egpu.triton: a kernel compiles for device "
                                   f"{device}; the probe object was not loaded "
                                   "with Context.load(), so it cannot be "
                                   "loaded again for that device")
            ctx = Context(sm=self._probe._ctx.sm, offline=self._probe._ctx.offline)
            self._own.append(ctx)
            obj = ctx.load(*self._probe._load_args)
            self._attach(obj)
            self.objects[device] = obj
        return obj

    def _instrument(self, ptx):
        device = self._triton.runtime.driver.active.get_current_device()
        with self._lock:
            target = self._object(device)
            ctx = target if isinstance(target, Context) else target._ctx
            out, report = ctx.instrument(ptx)
            self.kernels.extend((device, k) for k in report.kernels)
            if self._on_launch is not None:
                for k in report.kernels:
                    self.ptx.setdefault(k.name, []).append(out)
            self.instrument_ms.append(report.instrument_ms)
        return out

    # -- reading ---------------------------------------------------------

    def by_kernel(self, map_name):
        """``{kernel name: value}`` of map ``map_name`` (keyed by kernel id)
        summed over every device's object."""
        out = {}
        for obj in self.objects.values():
            if isinstance(obj, Context):
                raise NotSupported("egpu.triton: instrumenting with a bare context: no maps")
            for name, value in obj.maps[map_name].by_kernel().items():
                out[name] = out[name] + value if name in out else value
        return out


def instrument(probe, attach=None, cache_dir=None, on_launch=None):
    """Instrument every Triton kernel compiled from now on with the programs
    attached in ``probe`` (an egpu.Object, or a bare egpu.Context; its
    context serves the device current now); ``on_launch(metadata)`` runs
    before each Triton launch. Kernels compiled for another device get ``probe`` loaded
    again into a context of that device and ``attach(obj)`` (default
    ``obj.attach_all()``). Instrumented binaries are cached in ``cache_dir``
    (default: a temporary directory removed at the end).

    Returns an Instrumentation; use it as a context manager, or call its
    undo(). One at a time: a second raises egpu.Busy. Raises
    egpu.NotSupported for a Triton older than 3.4 (naming its version)."""
    return _single.start(Instrumentation(probe, attach, cache_dir, on_launch))
