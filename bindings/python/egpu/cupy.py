# SPDX-License-Identifier: MIT
"""Instrument CuPy's raw kernels: the CUDA source goes through NVRTC to
PTX, libegpu instruments the PTX, and CuPy loads the result.

    ctx = egpu.Context(); obj = ctx.load("count.bpf.o"); obj.attach_all()
    saxpy = egpu.cupy.raw_kernel(ctx, SRC, "saxpy")
    saxpy((blocks,), (threads,), (cupy.float32(2), x, y, cupy.int32(n)))
    print(obj.maps["counts"].by_kernel())

Kernels are found by the names in the PTX: declare them ``extern "C"``
(or pass the mangled name). ``ctx`` must serve the current device (its maps
live in that device's memory); make one context per device.
"""
import atexit
import os
import shutil
import tempfile

from ._errors import NotSupported


_files = None  # directory of the instrumented PTX files CuPy loads from


def _ptx_file(text):
    """A file holding ``text``: CuPy's RawModule(path=) loads it when a
    function is first asked for (per device), so it stays until exit."""
    global _files
    if _files is None:
        _files = tempfile.mkdtemp(prefix="egpu-cupy-")
        atexit.register(shutil.rmtree, _files, True)
    fd, path = tempfile.mkstemp(suffix=".ptx", dir=_files)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def _cupy():
    try:
        import cupy
        from cupy_backends.cuda.libs import nvrtc
    except ImportError as e:
        raise NotSupported(f"egpu.cupy: CuPy is not importable ({e})") from e
    return cupy, nvrtc


def ptx(code, options=(), name="egpu_kernel.cu"):
    """PTX of CUDA source ``code`` from NVRTC, for the current device's
    architecture unless ``options`` names one (-arch=compute_XX)."""
    cupy, nvrtc = _cupy()
    options = tuple(options)
    if not any(o.startswith(("-arch", "--gpu-architecture")) for o in options):
        options += (f"-arch=compute_{cupy.cuda.Device().compute_capability}",)
    prog = nvrtc.createProgram(code, name, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, list(options))
        except nvrtc.NVRTCError as e:
            raise RuntimeError(f"NVRTC: {e}\n{nvrtc.getProgramLog(prog)}") from e
        text = nvrtc.getPTX(prog)
    finally:
        nvrtc.destroyProgram(prog)
    return text.decode() if isinstance(text, bytes) else text


def raw_module(ctx, code=None, options=(), *, ptx_text=None):
    """A cupy.RawModule of ``code`` (CUDA source, through NVRTC) or of
    ``ptx_text``, instrumented by ``ctx`` with every attached program."""
    cupy, _ = _cupy()
    if (code is None) == (ptx_text is None):
        raise ValueError("egpu.cupy.raw_module: give code or ptx_text, not both")
    text = ptx(code, options) if ptx_text is None else ptx_text
    out, _ = ctx.instrument(text)
    # CuPy loads a module from a file with cuModuleLoad, which takes PTX.
    return cupy.RawModule(path=_ptx_file(out))


def raw_kernel(ctx, code, name, options=()):
    """Kernel ``name`` of CUDA source ``code``, instrumented by ``ctx``:
    callable as a cupy.RawKernel, ``k(grid, block, args, shared_mem=0)``."""
    return raw_module(ctx, code, options).get_function(name)
