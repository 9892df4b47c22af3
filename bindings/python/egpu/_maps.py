# SPDX-License-Identifier: MIT
"""Maps as Python mappings.

Keys and values are ``int`` (little-endian, read as unsigned) when their
size is 1, 2, 4 or 8 bytes and ``bytes`` otherwise, unless Map.as_type()
names a ctypes type or a numpy dtype for them.
"""

import ctypes
import operator
from collections.abc import MutableMapping

from . import _egpu as _c
from ._errors import Full, InvalidArgument, NotFound
from ._events import RingBuffer

try:
    import numpy as _np
except ImportError:  # numpy is optional: per-thread values become lists
    _np = None

ANY = _c.EGPU_ANY
NOEXIST = _c.EGPU_NOEXIST
EXIST = _c.EGPU_EXIST

# Several values per key: one per GPU thread slot, or one per SM.
_PER_THREAD_TYPES = (_c.EGPU_MAP_PERCPU_ARRAY, _c.EGPU_MAP_PERTHREAD_ARRAY,
                     _c.EGPU_MAP_PERTHREAD_ARRAY_HOST, _c.EGPU_MAP_SM_ARRAY)
_ARRAY_TYPES = _PER_THREAD_TYPES + (
    _c.EGPU_MAP_ARRAY, _c.EGPU_MAP_GPU_ARRAY,
    _c.EGPU_MAP_GPU_KERNEL_SHARED_ARRAY, _c.EGPU_MAP_GPU_ARRAY_HOST)
_CTYPES = (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)


class _Codec:
    """Converts one side of a map, keys or values, to and from bytes:
    subclasses define encode(v) -> bytes-like and decode(bytes)."""

    def __init__(self, size):
        self.size = size

    def decode_many(self, b, n):
        """``n`` consecutive values (per-thread maps) as a list."""
        return [self.decode(b[i * self.size:(i + 1) * self.size])
                for i in range(n)]

    def array(self, b, n):
        """``n`` consecutive values as a numpy array, or a list without numpy."""
        return self.decode_many(b, n)


class _IntCodec(_Codec):
    def encode(self, v):
        v = operator.index(v)
        bits = 8 * self.size
        if not -(1 << (bits - 1)) <= v < 1 << bits:
            raise InvalidArgument(f"{v} does not fit in {self.size} bytes")
        return (v & ((1 << bits) - 1)).to_bytes(self.size, "little")

    def decode(self, b):
        return int.from_bytes(b, "little")

    def array(self, b, n):
        if _np is None:
            return self.decode_many(b, n)
        return _np.frombuffer(b, dtype=f"<u{self.size}", count=n)


class _BytesCodec(_Codec):
    def encode(self, v):
        return v  # the C side checks the size

    def decode(self, b):
        return b

    def array(self, b, n):
        """One row of uint8 per thread."""
        if _np is None:
            return self.decode_many(b, n)
        return _np.frombuffer(b, dtype=_np.uint8).reshape(n, self.size)


class _CtypesCodec(_Codec):
    def __init__(self, size, ctype):
        super().__init__(size)
        self.ctype = ctype
        self.simple = issubclass(ctype, ctypes._SimpleCData)

    def encode(self, v):
        if isinstance(v, self.ctype):
            return bytes(v)
        if self.simple:
            return bytes(self.ctype(v))
        return v

    def decode(self, b):
        v = self.ctype.from_buffer_copy(b)
        return v.value if self.simple else v

    def array(self, b, n):
        if _np is None:
            return self.decode_many(b, n)
        return _np.frombuffer(b, dtype=_np.dtype(self.ctype), count=n)


class _DtypeCodec(_Codec):
    def __init__(self, size, dtype):
        super().__init__(size)
        self.dtype = dtype

    def encode(self, v):
        return _np.asarray(v, dtype=self.dtype).tobytes()

    def decode(self, b):
        return _np.frombuffer(b, dtype=self.dtype, count=1)[0]

    def array(self, b, n):
        return _np.frombuffer(b, dtype=self.dtype, count=n)


def _codec(size, kind, what):
    """The codec for a side of ``size`` bytes: ``kind`` None (int or bytes
    by size), int, bytes, a ctypes type or anything numpy.dtype() takes."""
    if kind is None:
        kind = int if size in (1, 2, 4, 8) else bytes
    if kind is bytes:
        return _BytesCodec(size)
    if kind is int:
        if size not in (1, 2, 4, 8):
            raise InvalidArgument(f"{what} of {size} bytes cannot be an int")
        return _IntCodec(size)
    if isinstance(kind, type) and issubclass(kind, _CTYPES):
        codec, got = _CtypesCodec(size, kind), ctypes.sizeof(kind)
    elif _np is not None:
        dtype = _np.dtype(kind)
        codec, got = _DtypeCodec(size, dtype), dtype.itemsize
    else:
        raise InvalidArgument(f"{what} type {kind!r}: not int, bytes or a "
                              "ctypes type, and numpy is not installed")
    if got != size:
        raise InvalidArgument(f"{what} type {kind!r} has {got} bytes, "
                              f"the map's {what}s have {size}")
    return codec


def _add_words(a, b):
    """``a + b`` word by word as the C library sums values: 8-byte words
    when the size is a multiple of 8, else 4-byte words."""
    word = 4 if len(a) % 8 else 8
    out = bytearray(len(a))
    for off in range(0, len(a) - word + 1, word):
        x = int.from_bytes(a[off:off + word], "little")
        y = int.from_bytes(b[off:off + word], "little")
        out[off:off + word] = ((x + y) & ((1 << 8 * word) - 1)).to_bytes(word, "little")
    return bytes(out)


class Map(MutableMapping):
    """A map of a loaded object. ``m[key]``, ``m[key] = v``, ``del m[key]``,
    ``len(m)``, iteration, ``keys()``, ``values()`` and ``items()`` work as
    on a dict. Lookups of a missing key raise egpu.NotFound, a KeyError.

    Per-thread maps (PERCPU_ARRAY, PERTHREAD_ARRAY) give every thread's
    value for a key as a numpy array (a list without numpy); ``sum(key)``
    adds them up.
    """

    def __init__(self, obj, handle, key=None, value=None):
        self._obj = obj
        self._h = handle
        self.name = _c.egpu_map_name(handle)
        self.type = _c.egpu_map_type(handle)
        self.key_size = _c.egpu_map_key_size(handle)
        self.value_size = _c.egpu_map_value_size(handle)
        self.max_entries = _c.egpu_map_max_entries(handle)
        self._key = _codec(self.key_size, key, "key")
        self._value = _codec(self.value_size, value, "value")

    def _handle(self):
        self._obj._live()
        return self._h

    def as_type(self, key=None, value=None):
        """This map with keys and/or values read and written as ``int``,
        ``bytes``, a ctypes type (``ctypes.c_uint32``, a Structure) or a
        numpy dtype. The sizes must match the map's."""
        return Map(self._obj, self._h, key, value)

    @property
    def values_per_key(self):
        """Values under each key: the GPU thread slots of a per-thread map
        or the SM copies of an SM array living in GPU memory, else 1."""
        return _c.egpu_map_values_per_key(self._handle())

    @property
    def per_thread(self):
        return self.type in _PER_THREAD_TYPES or self.values_per_key > 1

    def __getitem__(self, key):
        h = self._handle()
        raw = _c.map_lookup(h, self._key.encode(key))
        if self.per_thread:
            return self._value.array(raw, _c.egpu_map_values_per_key(h))
        return self._value.decode(raw)

    def __setitem__(self, key, value):
        self.store(key, value)

    def store(self, key, value, flags=ANY):
        """Store ``value`` under ``key``; ``flags``: egpu.ANY (create or
        replace), egpu.NOEXIST (create only: egpu.Exists if present) or
        egpu.EXIST (replace only: egpu.NotFound if absent)."""
        _c.map_update(self._handle(), self._key.encode(key),
                      self._value.encode(value), flags)

    def __delitem__(self, key):
        _c.map_delete(self._handle(), self._key.encode(key))

    def __contains__(self, key):
        try:
            _c.map_lookup(self._handle(), self._key.encode(key))
        except (NotFound, Full):  # Full: an index beyond an array
            return False
        return True

    def __iter__(self):
        h, raw = self._handle(), None
        while True:
            raw = _c.map_next_key(h, raw)
            if raw is None:
                return
            yield self._key.decode(raw)

    def __len__(self):
        """Entries: max_entries for arrays, the keys present for hashes."""
        if self.type in _ARRAY_TYPES:
            return self.max_entries
        return sum(1 for _ in self)

    def sum(self, key):
        """Every thread's value under ``key`` added up, word by word (any
        map: the value itself)."""
        raw = _c.map_lookup_sum(self._handle(), self._key.encode(key))
        return self._value.decode(raw)

    def kernel(self, name):
        """For a map keyed by kernel id: the values under the ids of every
        kernel the context instrumented that ``name`` names (mangled,
        demangled, base name or glob), summed as sum() does; None when none
        has an entry. Raises egpu.NotFound when no kernel matches."""
        raw = _c.map_lookup_kernel(self._handle(), name)
        return None if raw is None else self._value.decode(raw)

    def by_kernel(self):
        """For a map keyed by kernel id: ``{demangled kernel name: value}``
        over every kernel the context instrumented that has an entry, the
        ids of one name (a kernel compiled several times: autotuning,
        specialisations, one module per kernel) summed as sum() does."""
        h, sums = self._handle(), {}
        for k in self._obj._ctx.kernels:
            try:
                raw = _c.map_lookup_sum(h, self._id_key(k.kernel_id))
            except (NotFound, Full):  # no entry, or beyond the array
                continue
            if k.demangled in sums:
                raw = _add_words(sums[k.demangled], raw)
            sums[k.demangled] = raw
        return {name: self._value.decode(raw) for name, raw in sums.items()}

    def _id_key(self, kernel_id):
        if self.key_size not in (4, 8):
            raise InvalidArgument(f"map {self.name!r}: keys of {self.key_size} "
                                  "bytes are not kernel ids (4 or 8 bytes)")
        return kernel_id.to_bytes(self.key_size, "little")

    def ring_buffer(self, callback=None, batch=False, path=None, threads=0,
                    chunks=False):
        """A RingBuffer consuming this ring map (RINGBUF, PERF_EVENT_ARRAY,
        GPU_RINGBUF); ``callback(bytes)`` for poll() (a list of bytes with
        ``batch``, a chunk of whole records with ``chunks``), records also
        streamed to ``path``, drained by ``threads`` consumer threads.
        Other maps raise egpu.InvalidArgument."""
        return RingBuffer(self, callback, batch, path, threads, chunks)

    def __repr__(self):
        return (f"<egpu.Map {self.name!r} type {self.type} key {self.key_size}B "
                f"value {self.value_size}B max_entries {self.max_entries}>")
