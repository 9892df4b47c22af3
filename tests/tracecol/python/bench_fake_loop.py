# SPDX-License-Identifier: MIT
"""The collector's cost per launch from Python, on the CPU: launch_loop.py's
shape (a model of 8 layers called through Module-like __call__, launches
made with the GIL released, as PyTorch's) launching through the stand-in
libcupti of the tracecol tests, untraced, traced with Python frames and
without; best of ROUNDS.

    python3 bench_fake_loop.py LIBEGPU FAKE_CUPTI [STEPS [ROUNDS]]
"""
import ctypes
import os
import sys
import time

LIBEGPU, FAKE = sys.argv[1], sys.argv[2]
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
ROUNDS = int(sys.argv[4]) if len(sys.argv) > 4 else 3
os.environ["EGPU_CUPTI_LIB"] = FAKE
egpu = ctypes.CDLL(LIBEGPU)
fake = ctypes.CDLL(FAKE)      # ctypes releases the GIL around the call
launch, flush = fake.fake_launch, fake.cuptiActivityFlushAll


class TraceOpts(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t), ("max_frames", ctypes.c_uint32),
                ("no_copies", ctypes.c_bool), ("buffer_size", ctypes.c_size_t),
                ("no_python", ctypes.c_bool)]


class TraceStats(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t), ("launches", ctypes.c_uint64),
                ("kernels", ctypes.c_uint64), ("matched", ctypes.c_uint64),
                ("copies", ctypes.c_uint64), ("lost", ctypes.c_uint64),
                ("gpu_ns", ctypes.c_uint64), ("devices", ctypes.c_uint32)]


egpu.egpu_trace_start.restype = ctypes.c_void_p
egpu.egpu_trace_start.argtypes = [ctypes.POINTER(TraceOpts)]
egpu.egpu_trace_stop.argtypes = [ctypes.c_void_p]
egpu.egpu_trace_stats.argtypes = [ctypes.c_void_p, ctypes.POINTER(TraceStats)]
egpu.egpu_trace_free.argtypes = [ctypes.c_void_p]
egpu.egpu_errmsg.restype = ctypes.c_char_p


class Module:
    def __call__(self, *args):
        return self._call_impl(*args)

    def _call_impl(self, *args):
        return self.forward(*args)


class Layer(Module):
    def forward(self, x):
        launch(b"_Z6matmulv", False)     # x @ w
        launch(b"_Z4reluv", False)       # relu
        return x


class Model(Module):
    def __init__(self):
        self.layers = [Layer() for _ in range(8)]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def train_step(model, x):
    return model(x)


def run(model, steps):
    for i in range(steps):
        train_step(model, i)
        if i % 64 == 63:
            flush(0)        # the stand-in holds 4096 records; CUPTI's thread


def timed(model, mode):
    t = None
    if mode != "plain":
        opts = TraceOpts(ctypes.sizeof(TraceOpts), 0, True, 0,
                         mode == "nopy")
        t = egpu.egpu_trace_start(ctypes.byref(opts))
        assert t, egpu.egpu_errmsg()
    t0 = time.perf_counter()
    run(model, STEPS)
    dt = time.perf_counter() - t0
    if t:
        assert egpu.egpu_trace_stop(t) == 0, egpu.egpu_errmsg()
        st = TraceStats(ctypes.sizeof(TraceStats))
        egpu.egpu_trace_stats(t, ctypes.byref(st))
        assert st.matched == st.kernels == STEPS * 16, (st.matched, st.kernels)
        egpu.egpu_trace_free(t)
    return dt


def main():
    model = Model()
    run(model, 10)
    best = {}
    for _ in range(ROUNDS):
        for mode in ("plain", "python", "nopy"):
            dt = timed(model, mode)
            best[mode] = min(best.get(mode, dt), dt)
    per = {m: best[m] * 1e6 / (STEPS * 16) for m in best}
    print(f"CPython {sys.version.split()[0]}, {STEPS * 16} launches, "
          f"best of {ROUNDS}: plain {per['plain']:.3f} us/launch")
    for m in ("nopy", "python"):
        print(f"traced, {'no ' if m == 'nopy' else ''}Python frames: "
              f"{per[m]:.3f} us/launch, +{per[m] - per['plain']:.3f} us")


main()
