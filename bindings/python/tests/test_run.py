# SPDX-License-Identifier: MIT
"""Programs run directly on the CPU, and translated to PTX."""

import ctypes
import os
import subprocess

import pytest

import egpu


def test_run_updates_maps_and_returns_r0(obj):
    bump = obj.programs["bump"]
    for i in range(1, 4):
        assert bump.run(b"\x05\x00") == 100 + 3 * i
    assert bump.last_run_ns >= 0
    assert obj.maps["counts"][5] == 9
    data = next(m for m in obj.maps if m.name.endswith(".data"))
    assert data[0] == 109


def test_writable_memory_sees_stores_bytes_do_not(obj):
    bump = obj.programs["bump"]
    mem = bytearray(b"\x01\x00\x00")
    bump.run(mem)
    assert mem == bytearray(b"\x01\x2a\x00")
    ro = b"\x01\x00"
    bump.run(ro)
    assert ro == b"\x01\x00"


def test_run_with_ctypes_memory(obj):
    class Flow(ctypes.Structure):
        _fields_ = [("src", ctypes.c_uint32), ("dst", ctypes.c_uint32),
                    ("port", ctypes.c_uint16), ("proto", ctypes.c_uint16)]

    account = obj.programs["account"]
    flow = Flow(10, 20, 53, 17)
    assert account.run(flow) == 0
    assert account.run(flow) == 0
    (stats,) = obj.maps["flows"].values()
    assert int.from_bytes(stats[:8], "little") == 2
    assert int.from_bytes(stats[8:12], "little") == ctypes.sizeof(Flow)


def test_program_checks_its_memory(obj):
    # int -1, as a 32-bit return value: the memory is too short
    assert obj.programs["bump"].run() == 2**32 - 1


def test_bad_backend_and_memory(obj):
    bump = obj.programs["bump"]
    with pytest.raises(egpu.InvalidArgument, match="backend 'tpu'"):
        bump.run(b"\0\0", backend="tpu")
    with pytest.raises(TypeError):
        bump.run(12)


def test_gpu_run_refused_offline(obj):
    with pytest.raises(egpu.InvalidArgument, match="offline"):
        obj.programs["bump"].run(b"\0\0", backend="gpu")


def test_jit_ptx_assembles(obj, tmp_path):
    ptx = obj.programs["bump"].jit_ptx(func="bump_fn", kernel=True)
    assert ".visible .func" in ptx and "bump_fn" in ptx
    assert ".entry bump_fn_kernel" in ptx
    path = tmp_path / "bump.ptx"
    path.write_text(ptx)
    # -c: the hash map helpers live in the device runtime, linked later
    subprocess.run([os.environ.get("EGPU_PTXAS", "ptxas"), "-arch=sm_90", "-c",
                    "-o", os.devnull, str(path)], check=True)


def _saxpy_params(n):
    """saxpy(float a, const float *x, float *y, int n)'s 28 bytes."""
    import struct
    return struct.pack("<fIQQi", 2.0, 0, 0, 0, n)


def test_entry_probe_runs_with_params(ctx, params_path):
    obj = ctx.load(params_path)
    seen = obj.maps["seen"]
    assert obj.programs["record_n"].run(params=_saxpy_params(1000)) == 0
    assert seen[0] == 1000
    assert obj.programs["direct_n"].run(params=bytearray(_saxpy_params(77))) == 0
    assert seen[4] == 77
    # n past the end of a shorter block: -EFAULT through the helper
    r0 = obj.programs["record_n"].run(params=_saxpy_params(5)[:24])
    assert ctypes.c_int32(r0).value == -14
    with pytest.raises(egpu.Error, match="up to byte 28; 24 parameter bytes"):
        obj.programs["direct_n"].run(params=_saxpy_params(5)[:24])
    with pytest.raises(egpu.Error, match="either params"):
        obj.programs["direct_n"].run(b"\0" * 28, params=_saxpy_params(5))
