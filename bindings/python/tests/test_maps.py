# SPDX-License-Identifier: MIT
"""Maps as mappings: int and bytes sides, typed views, flags, errors."""

import ctypes
import struct

import pytest

import egpu



class Flow(ctypes.Structure):
    _fields_ = [("src", ctypes.c_uint32), ("dst", ctypes.c_uint32),
                ("port", ctypes.c_uint16), ("proto", ctypes.c_uint16)]


class Stats(ctypes.Structure):
    _fields_ = [("packets", ctypes.c_uint64), ("last_len", ctypes.c_uint32),
                ("flags", ctypes.c_uint32)]


def test_hash_map_behaves_like_a_dict(obj):
    counts = obj.maps["counts"]
    assert len(counts) == 0 and list(counts) == []
    for k in range(5):
        counts[k] = k * 10
    assert counts[3] == 30
    assert sorted(counts) == [0, 1, 2, 3, 4]
    assert dict(counts.items()) == {k: k * 10 for k in range(5)}
    assert len(counts) == 5 and 4 in counts and 5 not in counts
    del counts[4]
    assert counts.get(4) is None and len(counts) == 4
    with pytest.raises(KeyError):
        counts[4]
    assert counts.pop(3) == 30 and sorted(counts.values()) == [0, 10, 20]


def test_update_flags(obj):
    counts = obj.maps["counts"]
    counts.store(1, 5, egpu.NOEXIST)
    with pytest.raises(egpu.Exists, match="counts") as e:
        counts.store(1, 6, egpu.NOEXIST)
    assert e.value.code == -12
    counts.store(1, 7, egpu.EXIST)
    assert counts[1] == 7
    with pytest.raises(egpu.NotFound):
        counts.store(2, 7, egpu.EXIST)


def test_full_hash_map_raises_full(obj):
    counts = obj.maps["counts"]
    for k in range(counts.max_entries):
        counts[k] = 1
    with pytest.raises(egpu.Full, match="full"):
        counts[100] = 1
    counts[3] = 2  # replacing still works
    assert counts[3] == 2


def test_array_map_has_every_index(obj):
    slots = obj.maps["slots"]
    assert len(slots) == 8 and list(slots) == list(range(8))
    assert set(slots.values()) == {0}
    slots[7] = 2**64 - 1
    assert slots[7] == 2**64 - 1
    slots[6] = -1  # stored as two's complement, read back unsigned
    assert slots[6] == 2**64 - 1
    assert 8 not in slots
    with pytest.raises(egpu.Full):
        slots[8] = 1
    with pytest.raises(egpu.InvalidArgument, match="deleted"):
        del slots[0]


def test_int_sides_are_checked(obj):
    counts = obj.maps["counts"]
    with pytest.raises(egpu.InvalidArgument, match="does not fit"):
        counts[2**32] = 1
    with pytest.raises(TypeError):
        counts["one"] = 1
    with pytest.raises(TypeError):
        counts[1.5]


def test_struct_sides_are_bytes_by_default(obj):
    flows = obj.maps["flows"]
    key = struct.pack("<IIHH", 1, 2, 80, 6)
    flows[key] = struct.pack("<QII", 9, 100, 0)
    assert list(flows) == [key]
    assert struct.unpack("<QII", flows[key]) == (9, 100, 0)
    with pytest.raises(egpu.InvalidArgument, match="key of 3 bytes, expected 12"):
        flows[b"abc"]
    with pytest.raises(egpu.InvalidArgument, match="value of 2 bytes, expected 16"):
        flows[key] = b"no"


def test_ctypes_view(obj):
    flows = obj.maps["flows"].as_type(key=Flow, value=Stats)
    k = Flow(1, 2, 443, 6)
    flows[k] = Stats(packets=3, last_len=60)
    got = flows[k]
    assert isinstance(got, Stats) and (got.packets, got.last_len) == (3, 60)
    (only,) = list(flows)
    assert (only.src, only.dst, only.port, only.proto) == (1, 2, 443, 6)
    counts = obj.maps["counts"].as_type(key=ctypes.c_uint32, value=ctypes.c_int64)
    counts[ctypes.c_uint32(5)] = -2
    assert counts[5] == -2 and obj.maps["counts"][5] == 2**64 - 2


def test_numpy_dtype_view(obj):
    np = pytest.importorskip("numpy")
    dt = np.dtype([("packets", "<u8"), ("last_len", "<u4"), ("flags", "<u4")])
    flows = obj.maps["flows"].as_type(value=dt)
    key = bytes(12)
    flows[key] = (5, 64, 1)
    v = flows[key]
    assert (int(v["packets"]), int(v["last_len"]), int(v["flags"])) == (5, 64, 1)


def test_view_sizes_must_match(obj):
    with pytest.raises(egpu.InvalidArgument, match="has 4 bytes"):
        obj.maps["flows"].as_type(key=ctypes.c_uint32)
    with pytest.raises(egpu.InvalidArgument, match="cannot be an int"):
        obj.maps["flows"].as_type(key=int)


def test_per_thread_map_gives_every_value(obj):
    per_thread = obj.maps["per_thread"]
    assert per_thread.per_thread
    per_thread[1] = 7
    vals = per_thread[1]
    assert len(vals) == per_thread.values_per_key and list(vals) == [7] * len(vals)
    assert per_thread.sum(1) == 7 * per_thread.values_per_key
    assert per_thread.sum(0) == 0


def test_readonly_data_refuses_updates(obj):
    rodata = next(m for m in obj.maps if m.name.endswith(".rodata"))
    assert rodata.value_size == 8 and rodata[0] == 3  # const volatile step
    with pytest.raises(egpu.InvalidArgument, match="read-only"):
        rodata[0] = 4
