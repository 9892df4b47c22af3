# SPDX-License-Identifier: MIT
"""Writes spans.rec, a record file of span records in every record form,
and spans.txt, every lane access in it as libegpu's C decoder
(egpu_span_next, through egpu.decode_span) gives it: the file the C,
Python and Go decoders are each checked against (tests/events
test_events_api's span_fixture_decodes, bindings/python test_events,
bindings/go spans_test). Run with the Python bindings on PYTHONPATH:

    PYTHONPATH=build/bindings/python python3 tests/events/data/make_spans.py
"""

import os
import struct

import egpu

COMMIT, DISCARD, SPAN = 1, 2, 16
FULL = 0xFFFFFFFF


def w0(fmt, width, kind, size, site, mask):
    return fmt | width << 2 | kind << 4 | size << 7 | site << 13 | mask << 32


def short(kind, size, site, base):
    """An 8-byte short record: a whole warp at base + lane * size."""
    return struct.pack("<Q", 1 | {4: 1, 8: 2, 16: 3}[size] << 2 |
                       (kind - 1) << 4 | site << 6 | base << 16)


def span(block, warp, smid, body):
    payload = struct.pack("<IHH", block, warp, smid) + body
    return struct.pack("<II", len(payload), COMMIT | SPAN) + payload


def spans():
    # Affine, stride 4, a full warp; scattered, 2-byte deltas; 8-byte
    # deltas; long (site past 19 bits, 256 bytes); then an 8-byte discard
    # and a span of one negative-stride affine record and one 1-byte one;
    # a span of short records (version 3).
    a = struct.pack("<QQ", w0(1, 0, 1, 4, 9, FULL), 0x7F0000001000 | 4 << 48)
    a += struct.pack("<QQ", w0(2, 1, 2, 8, 10, 0x0000FFFF), 0x7F0000002000)
    a += struct.pack("<16h", *[(-1) ** i * 300 * i for i in range(16)])
    a += struct.pack("<QQ", w0(2, 3, 1, 4, 11, 0x3), 0x1000)
    a += struct.pack("<2q", -(1 << 40), 1 << 40)
    a += struct.pack("<QQ", w0(3, 0, 0, 0, 0, 0x80000000), 0x2000)
    a += struct.pack("<IHB9x", 1 << 20, 256, 2) + struct.pack("<b15x", -16)
    b = struct.pack("<QQ", w0(1, 0, 2, 8, 12, 0x00FF00F0),
                    0x7F0000003000 | (0x10000 - 8) << 48)
    b += struct.pack("<QQ", w0(2, 0, 3, 1, 13, 0x5), 0x7F0000004000)
    b += struct.pack("<2b14x", -3, 100)
    # Short records in both halves of a slot, a zero second half (padding
    # before a 16-byte record), and two short ones that end the file.
    c = short(1, 4, 20, 0x7F0000005000) + short(2, 16, 1023, 0x7F0000006000)
    c += short(4, 8, 0, 0x7F0000007000) + struct.pack("<Q", 0)
    c += struct.pack("<QQ", w0(1, 0, 1, 4, 21, 0x0F0F0000), 0x7F0000008000 | 4 << 48)
    c += short(3, 4, 22, 0x7F0000009000) + short(1, 4, 23, 0xFFFFFFFFF000)
    discard = struct.pack("<II", 0, COMMIT | DISCARD)
    return span(5, 3, 7, a) + discard + span(6, 1, 2, b) + span(7, 2, 3, c)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    body = spans()
    with open(os.path.join(here, "spans.rec"), "wb") as f:
        f.write(b"EGPU-REC" + struct.pack("<II", 3, 16) + body)
    lines = []
    for rec in egpu.read_record_file(os.path.join(here, "spans.rec")):
        info, accesses = egpu.decode_span(rec)
        for a in accesses:
            lanes = [i for i in range(32) if a.mask >> i & 1]
            for lane, addr in zip(lanes, a.addrs):
                lines.append(f"{addr} {a.site} {a.size} {a.kind} {lane} "
                             f"{info.block} {info.warp} {info.smid}\n")
    with open(os.path.join(here, "spans.txt"), "w") as f:
        f.write("# addr site size kind lane block warp smid (make_spans.py)\n")
        f.writelines(lines)


if __name__ == "__main__":
    main()
