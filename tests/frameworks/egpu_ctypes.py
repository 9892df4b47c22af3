"""The few libegpu calls the framework tests need, through ctypes, so they
run wherever libegpu.so and the frameworks are, with nothing to compile."""
import ctypes
import os
from ctypes import (POINTER, byref, c_char_p, c_double, c_int, c_size_t,
                    c_uint32, c_uint64, c_void_p)


class Report(ctypes.Structure):
    _fields_ = [("sz", c_size_t), ("kernel_cnt", c_uint32),
                ("kernels_patched", c_uint32), ("entry_points", c_uint32),
                ("exit_points", c_uint32), ("programs", c_uint32),
                ("instrument_ms", c_double), ("kernels", c_void_p)]


class Egpu:
    def __init__(self, path):
        lib = ctypes.CDLL(path)
        for name, res, args in [
            ("egpu_ctx_new", c_void_p, [c_void_p]),
            ("egpu_ctx_free", None, [c_void_p]),
            ("egpu_errmsg", c_char_p, []),
            ("egpu_load", c_void_p, [c_void_p, c_char_p, c_void_p]),
            ("egpu_attach_all", c_int, [c_void_p]),
            ("egpu_instrument_ptx", c_int,
             [c_void_p, c_char_p, c_size_t, POINTER(c_void_p),
              POINTER(c_size_t), POINTER(Report)]),
            ("egpu_obj_map", c_void_p, [c_void_p, c_char_p]),
            ("egpu_map_lookup", c_int, [c_void_p, c_void_p, c_void_p]),
            ("egpu_map_update", c_int, [c_void_p, c_void_p, c_void_p, c_uint64]),
        ]:
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        self.lib = lib
        self.libc = ctypes.CDLL(None)

    def check(self, ok, what):
        if not ok:
            raise RuntimeError("%s: %s" % (what, self.lib.egpu_errmsg().decode()))


class Probe:
    """A context with one object loaded and attached from its sections."""

    def __init__(self, egpu, obj_path):
        self.e = egpu
        self.ctx = egpu.lib.egpu_ctx_new(None)
        egpu.check(self.ctx, "egpu_ctx_new")
        self.obj = egpu.lib.egpu_load(self.ctx, obj_path.encode(), None)
        egpu.check(self.obj, "egpu_load")
        egpu.check(egpu.lib.egpu_attach_all(self.obj) > 0, "egpu_attach_all")

    def instrument(self, ptx):
        out, out_len, rep = c_void_p(), c_size_t(), Report(sz=ctypes.sizeof(Report))
        data = ptx.encode()
        rc = self.e.lib.egpu_instrument_ptx(self.ctx, data, len(data), byref(out),
                                            byref(out_len), byref(rep))
        self.e.check(rc == 0, "egpu_instrument_ptx")
        text = ctypes.string_at(out, out_len.value).decode()
        self.e.libc.free(out)
        return text, rep

    def u64(self, map_name, key):
        m = self.e.lib.egpu_obj_map(self.obj, map_name.encode())
        self.e.check(m, "egpu_obj_map")
        k, v = c_uint32(key), c_uint64()
        self.e.check(self.e.lib.egpu_map_lookup(m, byref(k), byref(v)) == 0,
                     "egpu_map_lookup")
        return v.value

    def reset(self, map_name, keys):
        m = self.e.lib.egpu_obj_map(self.obj, map_name.encode())
        for key in keys:
            k, v = c_uint32(key), c_uint64(0)
            self.e.check(self.e.lib.egpu_map_update(m, byref(k), byref(v), 0) == 0,
                         "egpu_map_update")

    def close(self):
        self.e.lib.egpu_ctx_free(self.ctx)
