# SPDX-License-Identifier: MIT
"""Ring buffers fed by programs run on the CPU (no GPU needed)."""

import struct
import threading
import time

import pytest

import egpu

EVENT = struct.Struct("<QQQ32x")  # seq, tag, square; 56 bytes


@pytest.fixture
def ev(ctx, events_path):
    return ctx.load(events_path)


def emit(obj, n, tag, prog="emit_events"):
    return obj.programs[prog].run(struct.pack("<QQ", n, tag))


def test_callback_gets_every_record_in_order(ev):
    got = []
    with ev.maps["events"].ring_buffer(got.append) as rb:
        assert emit(ev, 10, 7) == 10
        assert rb.poll(100) == 10
        assert [EVENT.unpack(r) for r in got] == [(i, 7, i * i) for i in range(10)]
        assert rb.consume() == 0
        st = rb.stats()
        assert st == {"records": 10, "bytes": 10 * EVENT.size, "drops": 0, "rings": 1,
                      "copied": 0}  # a ring in host memory: nothing copied
        assert rb.drops == 0


def test_batches_and_file(ev, tmp_path):
    path = tmp_path / "trace.bin"
    calls = []
    with ev.maps["events"].ring_buffer(calls.append, batch=True, path=path) as rb:
        assert emit(ev, 10, 7) == 10
        assert rb.poll(100) == 10
        assert len(calls) == 1
        assert [EVENT.unpack(r)[:2] for r in calls[0]] == [(i, 7) for i in range(10)]
        emit(ev, 3, 8)
        assert [EVENT.unpack(r)[:2] for r in rb.read()] == [(i, 8) for i in range(3)]
    data = path.read_bytes()
    assert data[:8] == b"EGPU-REC" and len(data) == 16 + 13 * (8 + EVENT.size)
    for k in range(13):
        rec = data[16 + k * (8 + EVENT.size):16 + (k + 1) * (8 + EVENT.size)]
        assert struct.unpack("<Q", rec[:8])[0] == EVENT.size
        assert EVENT.unpack(rec[8:])[:2] == ((k, 7) if k < 10 else (k - 10, 8))
    # Read back by the library, and refused once cut short.
    recs = list(egpu.read_record_file(path))
    assert [EVENT.unpack(r)[:2] for r in recs] == \
        [(i, 7) for i in range(10)] + [(i, 8) for i in range(3)]
    path.write_bytes(data[:-4])
    with pytest.raises(egpu.FormatError, match="cut short"):
        list(egpu.read_record_file(path))


def test_consumer_threads(ev, tmp_path):
    # A host ring is one shard: the polling thread alone, order kept.
    got = []
    with ev.maps["events"].ring_buffer(got.append, batch=True, threads=4) as rb:
        assert emit(ev, 10, 7) == 10
        assert rb.poll(100) == 10
        assert [EVENT.unpack(r)[:2] for r in got[0]] == [(i, 7) for i in range(10)]
    with pytest.raises(egpu.InvalidArgument, match="65 consumer threads"):
        ev.maps["events"].ring_buffer(got.append, threads=65)


def test_file_only(ev, tmp_path):
    path = tmp_path / "only.bin"
    with egpu.RingBuffer(ev.maps["events"], path=path) as rb:
        emit(ev, 4, 1)
        assert rb.read() == []  # to the file, not to Python
        assert rb.stats()["records"] == 4
    assert len(path.read_bytes()) == 16 + 4 * (8 + EVENT.size)
    with pytest.raises(egpu.Error):
        egpu.RingBuffer(ev.maps["events"], path=tmp_path / "no" / "dir.bin")


def test_span_records_decode(ev):
    got = []
    with ev.maps["events"].ring_buffer(got.append) as rb:
        prog = ev.programs["span_one"]
        assert prog.run(struct.pack("<QQ", 0, 0x7F0000001230)) == 0
        assert prog.run(struct.pack("<QQ", 0, 1 << 60)) == 0  # a long record
        assert rb.consume() == 2
        assert rb.reclaim() == 0  # nothing left open
    info, recs = egpu.decode_span(got[0])
    assert info == egpu.SpanInfo(0, 0, 0)
    assert recs == [egpu.WarpAccess(1, 9, 4, egpu.MEM_KINDS["load"], 1, 0,
                                    (0x7F0000001230,))]
    assert egpu.decode_span(got[1])[1][0].addrs == (1 << 60,)
    assert egpu.decode_span(got[1])[1][0].affine == 0
    with pytest.raises(egpu.FormatError, match="20 bytes"):
        egpu.decode_span(bytes(20))
    addrs = egpu.span_addresses(got[0])
    assert addrs.dtype.itemsize == 8 and list(addrs) == [0x7F0000001230]
    with pytest.raises(egpu.FormatError, match="20 bytes"):
        egpu.span_addresses(bytes(20))


def test_read_and_records(ev):
    rb = egpu.RingBuffer(ev.maps["events"])
    assert rb.read() == []
    emit(ev, 3, 1)
    batch = rb.read(timeout=0.5)
    assert [EVENT.unpack(r)[0] for r in batch] == [0, 1, 2]
    emit(ev, 5, 2)
    t0 = time.monotonic()
    seqs = [EVENT.unpack(r)[:2] for r in rb.records(timeout=0.05)]
    assert seqs == [(i, 2) for i in range(5)]
    assert time.monotonic() - t0 >= 0.05  # waited for a sixth, in vain
    rb.close()
    assert rb.closed


def test_reserve_submit_and_discard(ev):
    with ev.maps["events"].ring_buffer() as rb:
        for v in (4, 5, 6):
            assert ev.programs["reserve"].run(struct.pack("<Q", v)) == 0
        assert rb.read() == [struct.pack("<Q", 4), struct.pack("<Q", 6)]


def test_full_ring_drops_and_counts(ev):
    with ev.maps["tiny"].ring_buffer() as rb:
        assert emit(ev, 80, 3, "emit_tiny") == 64
        assert rb.drops == 16
        assert len(rb.read()) == 64
        assert emit(ev, 3, 4, "emit_tiny") == 3  # room again
        assert [EVENT.unpack(r)[1] for r in rb.read()] == [4, 4, 4]
        assert rb.stats()["drops"] == 16


def test_callback_exception_stops_and_propagates(ev):
    seen = []

    def picky(rec):
        seen.append(EVENT.unpack(rec)[0])
        if len(seen) == 2:
            raise ValueError("enough")

    with ev.maps["events"].ring_buffer(picky) as rb:
        emit(ev, 5, 0)
        with pytest.raises(ValueError, match="enough"):
            rb.poll(0)
        assert seen == [0, 1]
        assert rb.poll(0) == 3  # the rest stayed in the ring
        assert seen == [0, 1, 2, 3, 4]


def test_callback_cannot_close_its_ring(ev):
    rb = ev.maps["events"].ring_buffer(lambda rec: rb.close())
    emit(ev, 1, 0)
    with pytest.raises(egpu.InvalidArgument, match="own ring buffer"):
        rb.poll(0)
    assert not rb.closed
    rb.close()


def test_waiting_releases_the_gil_and_sees_late_records(ev):
    rb = ev.maps["events"].ring_buffer()
    emitter = threading.Timer(0.05, emit, (ev, 2, 9))
    emitter.start()
    t0 = time.monotonic()
    got = rb.read(timeout=5)
    emitter.join()
    assert [EVENT.unpack(r)[:2] for r in got] == [(0, 9), (1, 9)]
    assert time.monotonic() - t0 < 4
    rb.close()


def test_fileno_is_a_timer(ev):
    import selectors

    with ev.maps["events"].ring_buffer() as rb, selectors.DefaultSelector() as sel:
        sel.register(rb, selectors.EVENT_READ)
        emit(ev, 1, 5)
        assert sel.select(timeout=1)
        assert len(rb.read()) == 1


def test_errors(ev):
    with pytest.raises(egpu.InvalidArgument, match="'plain'.*not a ring buffer"):
        ev.maps["plain"].ring_buffer()
    rb = ev.maps["events"].ring_buffer()
    with pytest.raises(egpu.InvalidArgument, match="already consumed"):
        egpu.RingBuffer(ev.maps["events"])
    with pytest.raises(egpu.InvalidArgument, match="no callback"):
        rb.poll(0)
    with pytest.raises(egpu.NotSupported):
        ev.maps["events"][b""]  # key_size 0
    rb.close()
    with pytest.raises(egpu.InvalidArgument, match="closed"):
        rb.read()
    ev.maps["events"].ring_buffer().close()  # the map is free again


def test_closing_the_object_closes_its_rings(ctx, events_path):
    obj = ctx.load(events_path)
    rb = obj.maps["events"].ring_buffer()
    obj.close()
    assert rb.closed
    obj = ctx.load(events_path)
    rb = obj.maps["events"].ring_buffer()
    ctx.close()
    assert rb.closed


def test_print_without_gpu_lines(ctx):
    lines = []
    ctx.on_print(lambda line, block, thread: lines.append(line))
    assert ctx.print_poll(0.01) == 0  # no probe prints
    assert ctx.print_drops == 0
    with pytest.raises(TypeError):
        ctx.on_print(42)
    ctx.on_print(None)


SPAN_FLAGS = 1 | 16  # EGPU_REC_COMMIT | EGPU_REC_SPAN


def span_chunk():
    """One span record, as a chunk holds it, of a warp of 32 lanes: an
    affine record (stride 4), a scattered one with 2-byte deltas, one
    with 8-byte deltas, and a long one (site 1 << 20)."""
    def w0(fmt, width, kind, size, site, mask):
        return fmt | width << 2 | kind << 4 | size << 7 | site << 13 | mask << 32
    full = 0xFFFFFFFF
    body = struct.pack("<QQ", w0(1, 0, 1, 4, 9, full), 0x7F0000001000 | 4 << 48)
    body += struct.pack("<QQ", w0(2, 1, 2, 8, 10, 0x0000FFFF), 0x7F0000002000)
    body += struct.pack("<16h", *[(-1) ** i * 8 * i for i in range(16)])
    body += struct.pack("<QQ", w0(2, 3, 1, 4, 11, 0x3), 0x1000)
    body += struct.pack("<2q", 0, 1 << 40)
    body += struct.pack("<QQ", w0(3, 0, 0, 0, 0, 0x80000000), 0x2000)
    body += struct.pack("<IHB9x", 1 << 20, 256, 2) + struct.pack("<b15x", -16)
    payload = struct.pack("<IHH", 5, 3, 7) + body
    return struct.pack("<II", len(payload), SPAN_FLAGS) + payload, payload


def test_chunks_hand_records_over_whole(ev, tmp_path):
    path = tmp_path / "chunks.bin"
    with ev.maps["events"].ring_buffer(chunks=True, path=path) as rb:
        prog = ev.programs["span_one"]
        for addr in (0x7F0000001230, 0x7F0000001238, 1 << 60):
            assert prog.run(struct.pack("<QQ", 0, addr)) == 0
        chunks = rb.read()
        assert rb.stats()["records"] == 3
    assert len(chunks) == 1  # one pass, one chunk: three spans back to back
    chunk, spans, off = chunks[0], [], 0
    while off < len(chunk):
        size, flags = struct.unpack_from("<II", chunk, off)
        assert flags & 1  # EGPU_REC_COMMIT (the CPU's spans lack EGPU_REC_SPAN)
        spans.append(chunk[off + 8:off + 8 + size])
        off += 8 + (size + 7) // 8 * 8
    assert [egpu.decode_span(s)[1][0].addrs for s in spans] == \
        [(0x7F0000001230,), (0x7F0000001238,), (1 << 60,)]
    # The file holds the chunk raw; the C reader gives the spans back.
    assert path.read_bytes()[16:] == chunk
    assert list(egpu.read_record_file(path)) == spans
    with pytest.raises(egpu.InvalidArgument, match="not both"):
        ev.maps["events"].ring_buffer(batch=True, chunks=True)


def test_decode_spans_agrees_with_the_c_decoder(ev, tmp_path):
    np = pytest.importorskip("numpy")
    chunk, payload = span_chunk()
    want = egpu.span_addresses(payload)  # egpu_span_next, in C
    acc = egpu.decode_spans(chunk)
    assert acc.dtype == np.dtype(egpu.ACCESS) and len(acc) == 32 + 16 + 2 + 1
    assert list(acc["addr"]) == list(want)
    recs = egpu.decode_span(payload)[1]
    lanes = [lane for r in recs for lane in range(32) if r.mask >> lane & 1]
    assert list(acc["lane"]) == lanes
    assert list(acc["site"]) == [r.site for r in recs for _ in r.addrs]
    assert list(acc["size"]) == [r.size for r in recs for _ in r.addrs]
    assert list(acc["kind"]) == [r.kind for r in recs for _ in r.addrs]
    assert set(acc["block"]) == {5} and set(acc["warp"]) == {3} and set(acc["smid"]) == {7}
    slots = egpu.span_slots(payload)
    assert slots["mask"][0] == 0xFFFFFFFF and int(slots["w1"][0]) >> 48 == 4
    # A file of CPU-made spans, mapped: the same addresses as in C.
    path = tmp_path / "spans.bin"
    with ev.maps["events"].ring_buffer(path=path):
        for addr in (0x7F0000001230, 1 << 60):
            ev.programs["span_one"].run(struct.pack("<QQ", 0, addr))
    body = egpu.record_file_body(path)
    assert list(egpu.decode_spans(body)["addr"]) == \
        [a for s in egpu.read_record_file(path) for a in egpu.span_addresses(s)]
    with pytest.raises(egpu.FormatError):
        egpu.decode_spans(chunk[:-8])


FIXTURE = __import__("pathlib").Path(__file__).resolve().parents[3] / "tests/events/data"


def fixture_accesses():
    """tests/events/data/spans.txt: what the C decoder gives for spans.rec."""
    lines = (FIXTURE / "spans.txt").read_text().splitlines()
    return [tuple(int(x) for x in line.split()) for line in lines if not line.startswith("#")]


def test_shared_span_file_decodes_as_in_c():
    np = pytest.importorskip("numpy")
    want = fixture_accesses()
    path = FIXTURE / "spans.rec"
    acc = egpu.decode_spans(egpu.record_file_body(path))
    got = list(zip(*(acc[f].tolist() for f in
                     ("addr", "site", "size", "kind", "lane", "block", "warp", "smid"))))
    assert got == want
    # read_record_file (egpu_record_file_read) skips the discard.
    addrs = np.concatenate([egpu.span_addresses(s) for s in egpu.read_record_file(path)])
    assert addrs.tolist() == [w[0] for w in want]
