# SPDX-License-Identifier: MIT
"""Instrument the kernels XLA compiles for JAX.

    import egpu, egpu.jax          # before JAX compiles anything
    obj = egpu.Context().load("count.bpf.o"); obj.attach_all()
    with egpu.jax.instrument(obj) as inst:
        f(x).block_until_ready()
    print(inst.by_kernel("counts"))    # {"loop_tanh_fusion": threads, ...}

XLA turns the PTX of its fusions into a cubin with ptxas, a program it
finds on PATH, before the driver sees anything; that is the seam.
Importing egpu.jax puts libegpu's stand-in ``ptxas`` first on PATH (the
real one, found first, in EGPU_PTXAS_REAL). The stand-in compiles every
PTX unchanged, unless an instrumentation is active: then it hands the PTX
to a server in this process (EGPU_PTXAS_SOCKET), which instruments it
with the probe's context, and assembles what comes back. The maps stay in
this process, where they are read. Kernels keep XLA's fusion names.

Caches never mix instrumented and plain binaries: JAX's in-memory caches
are cleared on both sides of the instrumentation, and its persistent
compilation cache is off while it lasts, so a function compiled before
runs instrumented inside the ``with`` block, and plain after it.

Kernels XLA does not compile from PTX (cuBLAS, cuDNN and other library
calls) are left alone; ``inst.stats`` counts what the stand-in saw.
"""
import os
import shutil

from . import _c
from ._errors import NotSupported
from ._single import Single

_single = Single("egpu.jax")


def _find_real_ptxas(standin_dir):
    """The ptxas XLA would run without the stand-in."""
    named = os.environ.get("EGPU_PTXAS_REAL")
    if named:
        return named
    path = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and os.path.realpath(d) != os.path.realpath(standin_dir)]
    found = shutil.which("ptxas", path=os.pathsep.join(path))
    if found:
        return found
    cuda = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas")
    return cuda if os.access(cuda, os.X_OK) else None


def _put_standin_on_path():
    """Put the stand-in first on PATH; None, or why it could not be."""
    standin_dir = _c.egpu_ptxas_standin_dir()
    if standin_dir is None:
        return "libegpu's stand-in ptxas is not installed beside the library"
    real = _find_real_ptxas(standin_dir)
    if real is None:
        return "no ptxas found on PATH or in CUDA_HOME for the stand-in to run"
    os.environ["EGPU_PTXAS_REAL"] = real
    path = os.environ.get("PATH", "")
    if path.split(os.pathsep)[0] != standin_dir:
        os.environ["PATH"] = standin_dir + os.pathsep + path
    return None


# At import, so that the stand-in is the ptxas XLA finds first, whenever
# it looks; with no instrumentation active it is the real one.
_not_installed = _put_standin_on_path()


def _jax():
    try:
        import jax
    except ImportError as e:
        raise NotSupported(f"egpu.jax: JAX is not importable ({e})") from e
    return jax


class Instrumentation:
    """An active instrumentation (see egpu.jax.instrument()). Undo it with
    undo() or by leaving its ``with`` block; the probe's maps stay readable."""

    def __init__(self, probe):
        self._jax = _jax()
        self._probe = probe
        self._server = None
        self._saved_cache = None
        self.stats = None  # the stand-in server's counts, once undone

    def _install(self):
        if _not_installed:
            raise NotSupported(f"egpu.jax: {_not_installed}")
        jax = self._jax
        self._server = _c.ptxas_server_start(self._probe._ctx._live())
        self._saved_cache = jax.config.jax_enable_compilation_cache
        jax.config.update("jax_enable_compilation_cache", False)
        jax.clear_caches()
        os.environ["EGPU_PTXAS_SOCKET"] = _c.egpu_ptxas_server_socket(self._server)

    def live_stats(self):
        """The stand-in server's counts so far: requests, instrumented,
        declined (another GPU, or no kernel matched), failed, instrument_ms."""
        if self._server is None:
            return self.stats
        return _c.ptxas_server_stats(self._server)

    def undo(self):
        """Stop instrumenting; nothing compiled while instrumenting runs
        again. Idempotent."""
        if self._server is None:
            return
        try:
            os.environ.pop("EGPU_PTXAS_SOCKET", None)
            self.stats = _c.ptxas_server_stats(self._server)
            _c.egpu_ptxas_server_stop(self._server)
            self._server = None
            self._jax.clear_caches()
            self._jax.config.update("jax_enable_compilation_cache", self._saved_cache)
        finally:
            _single.end(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.undo()

    def by_kernel(self, map_name):
        """``{kernel name: value}`` of map ``map_name`` (keyed by kernel id)."""
        return self._probe.maps[map_name].by_kernel()


def instrument(probe):
    """Instrument every kernel XLA compiles from PTX from now on with the
    programs attached in ``probe`` (an egpu.Object whose context targets
    the GPU JAX runs on). Returns an Instrumentation; use it as a context
    manager, or call its undo(). One at a time: a second raises egpu.Busy.
    Raises egpu.NotSupported where JAX is missing or the stand-in ptxas
    cannot be put in XLA's way (saying why)."""
    return _single.start(Instrumentation(probe))
