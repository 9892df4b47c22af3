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
        assert st == {"records": 10, "bytes": 10 * EVENT.size, "drops": 0, "rings": 1}
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
