# SPDX-License-Identifier: MIT
"""Python frames in traces, without a GPU: this interpreter traces itself
through libegpu against the stand-in libcupti of the tracecol tests, whose
fake_launch plays a kernel launch (its callbacks on this thread).

    python3 test_python_frames.py LIBEGPU FAKE_CUPTI

Checks, for CPython 3.10-3.13, that each launch's folded stack holds its
Python frames ("function (file:line)", outermost first) in place of the
interpreter's _PyEval_EvalFrameDefault frames, with the native frames of a
C call between two Python frames (map) between them, whether the launch
is made holding the GIL (ctypes.PyDLL) or with it released (ctypes.CDLL,
as PyTorch launches); that launching from the same lines again gives the
same stacks (then read without the API, in CPython's frame layout); and
that no_python leaves them out."""
import ctypes
import os
import sys
import tempfile

LIBEGPU, FAKE = sys.argv[1], sys.argv[2]
os.environ["EGPU_CUPTI_LIB"] = FAKE
HERE = os.path.abspath(__file__)
egpu = ctypes.CDLL(LIBEGPU)
released = ctypes.CDLL(FAKE)     # ctypes releases the GIL around the call
held = ctypes.PyDLL(FAKE)        # keeps it


class TraceOpts(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t), ("max_frames", ctypes.c_uint32),
                ("no_copies", ctypes.c_bool), ("buffer_size", ctypes.c_size_t),
                ("no_python", ctypes.c_bool)]


EGPU_TRACE_FOLDED = 1
egpu.egpu_trace_start.restype = ctypes.c_void_p
egpu.egpu_trace_start.argtypes = [ctypes.POINTER(TraceOpts)]
egpu.egpu_trace_stop.argtypes = [ctypes.c_void_p]
egpu.egpu_trace_write.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p]
egpu.egpu_trace_free.argtypes = [ctypes.c_void_p]
egpu.egpu_errmsg.restype = ctypes.c_char_p


def line_of(fn, text):
    """The line of @fn's source holding @text."""
    lines = open(HERE).read().splitlines()
    start = fn.__code__.co_firstlineno
    for i in range(start - 1, len(lines)):
        if text in lines[i]:
            return i + 1
    raise AssertionError(text)


def launch_released():
    released.fake_launch(b"_Z8releasedv", False)


def launch_held():
    held.fake_launch(b"_Z4heldv", False)


def in_c_call(_):
    launch_held()


def through_c():
    list(map(in_c_call, [0]))


def model_step():
    launch_released()
    launch_held()
    through_c()


def traced(no_python=False):
    opts = TraceOpts(ctypes.sizeof(TraceOpts), 0, True, 0, no_python)
    t = egpu.egpu_trace_start(ctypes.byref(opts))
    assert t, egpu.egpu_errmsg()
    for _ in range(2):  # the second time read in CPython's frame layout
        model_step()
    assert egpu.egpu_trace_stop(t) == 0, egpu.egpu_errmsg()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.folded")
        assert egpu.egpu_trace_write(t, EGPU_TRACE_FOLDED, path.encode()) == 0
        stacks = [ln.rsplit(" ", 1)[0].split(";") for ln in open(path)]
    egpu.egpu_trace_free(t)
    return stacks


def py(fn, text):
    name = fn.__qualname__ if sys.version_info >= (3, 11) else fn.__name__
    return f"{name} ({HERE}:{line_of(fn, text)})"


def is_python(frame):
    return frame.endswith(")") and f" ({HERE}:" in frame


def check(stacks, kernel_frames):
    """The stack of a launch: the frames @kernel_frames in this
    order, Python frames only those, native ones after the innermost."""
    want = [py(f, t) for f, t in kernel_frames]
    for s in stacks:
        if all(w in s for w in want):
            break
    else:
        raise AssertionError((want, stacks))
    assert not any(f.startswith("_PyEval_EvalFrameDefault") for f in s), s
    got = [f for f in s if is_python(f)]
    # outermost: this file run as a script
    assert got[0].startswith("<module> ("), s
    assert got[-len(want):] == want, (got, want)
    inner = s.index(want[-1])
    assert all(not is_python(f) for f in s[inner + 1:]), s
    # then ctypes' frames, the API and the kernel
    assert s[-2] == "cudaLaunchKernel" and inner < len(s) - 3, s
    return s


def main():
    stacks = traced()
    # the same Python frames both times (native ones may differ: the
    # interpreter specializes the calls it repeats)
    assert len({tuple(f for f in s if is_python(f)) for s in stacks}) == 3, \
        stacks
    check(stacks, [
        (model_step, "launch_released()"),
        (launch_released, "released.fake_launch")])
    check(stacks, [
        (model_step, "    launch_held()"),
        (launch_held, "held.fake_launch")])
    s = check(stacks, [
        (through_c, "list(map("),
        (in_c_call, "launch_held()"),
        (launch_held, "held.fake_launch")])
    # in_c_call runs in a C call of the interpreter made by map: native
    # frames lie between it and through_c
    outer = s.index(py(through_c, "list(map("))
    assert s.index(py(in_c_call, "launch_held()")) > outer + 1, s
    for s in traced(no_python=True):
        assert not any(is_python(f) for f in s), s
    print("python frames ok:", sys.version.split()[0])


main()
