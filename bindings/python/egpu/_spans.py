# SPDX-License-Identifier: MIT
"""Spans (bpf_egpu_trace_span) as numpy arrays over the bytes that hold
them: a chunk (``RingBuffer(..., chunks=True)``), a span record, or a
record file's body (``record_file_body(path)``, mapped, not read). The
dtypes name the layout of lib/maps/span_layout.h; ``decode_spans``
gives every lane access of every record at once: C only walks from
record to record, numpy reads the fields. numpy is needed here only.

    for chunk in rb.read():                      # chunks=True
        acc = egpu.decode_spans(chunk)           # one row per lane access
        acc["addr"], acc["size"], acc["kind"], acc["site"], acc["lane"]
"""

from . import _egpu as _c
from ._errors import FormatError

# A span's first 16 bytes in a ring, a chunk or a file: the ring record's
# header (payload bytes, EGPU_REC_* flags), then its owner (span_info).
SPAN_HEADER = [("len", "<u4"), ("flags", "<u4"), ("block", "<u4"),
               ("warp", "<u2"), ("smid", "<u2")]
# One 16-byte slot holding an affine record (every lane at base + (i -
# lowest) * stride): fmt 1 in the low 2 bits of info, then width (0), kind
# (3 bits), size (6), site (19); the lanes' mask; base (48 bits) and a
# signed 16-bit stride in w1's top bits. A slot may hold two 8-byte short
# records instead (fmt 1, width 1-3: lib/core/span_record.h), which
# decode_spans reads.
AFFINE_RECORD = [("info", "<u4"), ("mask", "<u4"), ("w1", "<u8")]
# What decode_spans gives: one row per lane access.
ACCESS = [("addr", "<u8"), ("site", "<u4"), ("size", "<u2"), ("kind", "u1"),
          ("lane", "u1"), ("block", "<u4"), ("warp", "<u2"), ("smid", "<u2")]

_MAGIC = b"EGPU-REC"


def _np():
    import numpy
    return numpy


def record_file_body(path):
    """The records of a record file (RingBuffer(path=...)) as a read-only
    numpy uint8 array mapped over the file, the header checked: a chunk
    for decode_spans() or egpu_chunk_next's walk."""
    np = _np()
    head = np.memmap(path, dtype=np.uint8, mode="r", shape=(16,))
    magic, (version, hdr_size) = bytes(head[:8]), head[8:].view("<u4")
    if magic != _MAGIC or not 1 <= version <= 3 or hdr_size < 16 or hdr_size % 8:
        raise FormatError(f"'{path}' is no record file of version 1 to 3")
    return np.memmap(path, dtype=np.uint8, mode="r", offset=int(hdr_size))


def span_slots(span):
    """The records' 16-byte slots of a span record (the bytes a RingBuffer
    callback gets: span_info, then the slots) as a structured array of
    dtype AFFINE_RECORD over the same memory, zero-copy (a slot of a
    scattered record holds its deltas instead)."""
    np = _np()
    buf = memoryview(span).cast("B")
    if (len(buf) - 8) % 16:
        raise FormatError(f"{len(buf)} bytes are no span record (8 + a multiple of 16)")
    return np.frombuffer(buf, dtype=np.dtype(AFFINE_RECORD), offset=8)


def decode_spans(chunk):
    """Every lane access of every span record in ``chunk`` (whole ring
    records: a chunk, a record file's body), in record order then lane
    order, as a structured array of dtype ACCESS: address, site, bytes,
    kind (EGPU_MEM_*), lane, and the owning warp (block, warp, smid)."""
    np = _np()
    buf = np.frombuffer(memoryview(chunk).cast("B"), dtype=np.uint8)
    idx = np.frombuffer(_c.span_index(buf), dtype="<u8").reshape(-1, 2)
    words = buf[:len(buf) // 8 * 8].view("<u8")
    rec, hdr = idx[:, 0] // 8, idx[:, 1] // 8
    # A short record's next word may lie past the chunk's end: clipped.
    w0, owner = words[rec], words[hdr + 1]
    w1 = words[np.minimum(rec + 1, np.uint64(max(len(words) - 1, 0)))]
    fmt = w0 & 3
    width = (w0 >> 2) & 3
    kind, size, site = (w0 >> 4) & 7, (w0 >> 7) & 63, (w0 >> 13) & 0x7FFFF
    # Short (8 bytes): the whole warp at lane 0's address + lane * size.
    short = (fmt == 1) & (width != 0)
    if short.any():
        kind[short] = ((w0[short] >> 4) & 3) + 1
        size[short] = np.left_shift(2, width[short])
        site[short] = (w0[short] >> 6) & 0x3FF
        w1[short] = (w0[short] >> 16) | (size[short] << 48)
    long_ = fmt == 3
    if long_.any():  # site, size and kind whole in the next slot
        extra = words[rec[long_] + 2]
        site[long_] = extra & 0xFFFFFFFF
        size[long_] = (extra >> 32) & 0xFFFF
        kind[long_] = (extra >> 48) & 0xFF
    mask = np.where(short, 0xFFFFFFFF, w0 >> 32).astype(np.uint32)
    lanes = ((mask[:, None] >> np.arange(32, dtype=np.uint32)) & 1).astype(bool)
    r, lane = np.nonzero(lanes)  # record order, then lane order
    out = np.zeros(len(r), dtype=np.dtype(ACCESS))
    out["lane"], out["site"], out["size"] = lane, site[r], size[r]
    out["kind"] = kind[r]
    out["block"] = owner[r] & 0xFFFFFFFF
    out["warp"], out["smid"] = (owner[r] >> 32) & 0xFFFF, owner[r] >> 48
    # Affine: base + (lane - lowest) * stride, in 64-bit two's complement.
    low = np.argmax(lanes, axis=1)
    stride = (w1 >> 48).astype(np.uint16).view(np.int16).astype(np.int64)
    step = ((lane - low[r]) * stride[r]).astype(np.int64).view(np.uint64)
    addr = (w1[r] & ((1 << 48) - 1)) + step
    # Scattered and long: base, then the j-th active lane's delta of 1 <<
    # width bytes after one slot (two for long records).
    sc = fmt[r] != 1
    if sc.any():
        first = np.cumsum(lanes.sum(axis=1)) - lanes.sum(axis=1)
        j = (np.arange(len(r)) - first[r]).astype(np.uint64)
        at = idx[r, 0] + 16 * (1 + long_[r].astype(np.uint64)) + (j << width[r])
        for wv in range(4):
            sel = sc & (width[r] == wv)
            if sel.any():
                deltas = buf[:len(buf) >> wv << wv].view(f"<i{1 << wv}")
                d = deltas[(at[sel] >> wv).astype(np.int64)].astype(np.int64)
                addr[sel] = w1[r][sel] + d.view(np.uint64)
    out["addr"] = addr
    return out
