# SPDX-License-Identifier: MIT
"""Ring buffers: records programs write with bpf_ringbuf_output / reserve /
submit and bpf_perf_event_output, read on the host as bytes.

    with obj.maps["events"].ring_buffer() as rb:
        for rec in rb.records(timeout=1.0):   # ends after 1 s without one
            handle(rec)

or with a callback, libbpf style: ``rb = egpu.RingBuffer(m, on_record)``,
then ``rb.poll(timeout_ms)`` calls ``on_record(bytes)`` per record.
"""

import threading
from collections import namedtuple

from . import _egpu as _c
from ._errors import InvalidArgument


SpanInfo = namedtuple("SpanInfo", "block warp smid")
SpanInfo.__doc__ = "The warp whose records a span holds (all of them its own)."
WarpAccess = namedtuple("WarpAccess", "mask site size kind affine stride addrs")
WarpAccess.__doc__ = """One warp access of a span: ``addrs`` the active
lanes' addresses in lane order (lanes of ``mask``), ``size`` bytes each,
``kind`` an EGPU_MEM_* number (egpu.MEM_KINDS), ``site`` the probe
ctx's; ``affine``: lane i at addrs[0] + (i - lowest) * stride."""


def decode_span(record):
    """A span record of a ring written by bpf_egpu_trace_span (the bytes a
    RingBuffer callback gets) as (SpanInfo, [WarpAccess, ...]), decoded by
    the library's egpu_span_next. Raises FormatError on a malformed one."""
    block, warp, smid, recs = _c.span_decode(record)
    return SpanInfo(block, warp, smid), [WarpAccess(*r) for r in recs]


def span_addresses(record):
    """Every lane address of a span record as a numpy uint64 array, in
    record order, then lane order: decoded in C, no Python per record.
    Raises FormatError on a malformed span."""
    import numpy
    return numpy.frombuffer(_c.span_addresses(record), dtype="<u8")


def read_record_file(path):
    """The records of a file a RingBuffer wrote (``path=``), as bytes, in
    file order (the library's egpu_record_file_read: the header checked,
    a file cut short refused with FormatError). A span ring's records are
    spans: decode_span() or span_addresses() each."""
    return iter(_c.record_file_read(str(path)))


def _ms(timeout):
    """Seconds (None: without limit) as the C API's milliseconds (-1)."""
    if timeout is None or timeout < 0:
        return -1
    return int(timeout * 1000)


class RingBuffer:
    """The consumer of one ring map (RINGBUF, PERF_EVENT_ARRAY or
    GPU_RINGBUF); a map has one consumer at a time. ``callback(bytes)``
    receives the records of poll() and consume(). Waiting releases the
    GIL, so a thread may consume while others launch kernels. Close it
    (or leave a ``with`` block) before closing its object; closing the
    object or context closes it too.

    ``batch=True``: the callback (and read()) gets many records per call,
    ``callback(list_of_bytes)``, one Python call per batch instead of per
    record. ``path``: records are also streamed to that file (created or
    truncated; a 16-byte header, then each record an 8-byte little-endian
    header, the payload size, and the payload padded to 8 bytes;
    read_record_file() reads it back); without ``batch`` they then go to the
    file only. Drops stay counted either way.

    ``chunks=True``: the callback (and read()) gets chunks, the bytes of
    many whole records at once as the ring holds them (each an 8-byte
    header, len and EGPU_REC_* flags, then the payload padded to 8):
    one Python call and one copy per chunk, none per record. A span
    ring's chunk goes to decode_spans() whole (numpy).

    ``threads``: a ring in GPU memory is drained by that many threads at
    once, by shards (egpu_ringbuf_opts.threads); the callback is then
    called from those threads, one at a time (the GIL), a shard's records
    in order. Worth it mostly with ``path`` alone, where no Python runs."""

    def __init__(self, map, callback=None, batch=False, path=None, threads=0,
                 chunks=False):
        if batch and chunks:
            raise InvalidArgument("a ring buffer delivers batches or chunks, not both")
        self.map = map
        self.callback = callback
        self.batch = bool(batch)
        self.chunks = bool(chunks)
        self.path = path
        self._lock = threading.RLock()  # serialises polls and close()
        self._busy = False
        self._h = _c.ring_new(map._handle(), 2 if chunks else int(self.batch),
                              None if path is None else str(path), int(threads))
        map._obj._rings.append(self)

    def _poll(self, timeout_ms, fn):
        return self._pass(lambda h: _c.ring_poll(h, timeout_ms, fn))

    def _pass(self, run):
        """run(handle): one consumer pass, never from its own callback."""
        with self._lock:
            if self._h is None:
                raise InvalidArgument(f"the ring buffer of map '{self.map.name}' is closed")
            if self._busy:
                raise InvalidArgument("a ring buffer callback cannot poll or "
                                      "close its own ring buffer")
            self._busy = True
            try:
                return run(self._h)
            finally:
                self._busy = False

    def _callback(self):
        if self.callback is None:
            raise InvalidArgument("this ring buffer has no callback: use "
                                  "read() or records()")
        return self.callback

    def poll(self, timeout_ms=-1):
        """Call the callback for every record, first waiting up to
        ``timeout_ms`` (-1: without limit, 0: not at all) when there is
        none. Returns how many it handled. An exception raised by the
        callback stops consumption and propagates; that record counts as
        consumed, the ones after it stay in the ring."""
        return self._poll(int(timeout_ms), self._callback())

    def consume(self):
        """poll(0): the records there now, without waiting."""
        return self.poll(0)

    def reclaim(self):
        """consume(), also taking the spans (bpf_egpu_trace_span) left
        open by threads that ended without their flush (a trap, no exit
        probe). Only once no kernel writing the ring runs (after a
        synchronize). Returns how many records it handled."""
        fn = self._callback()
        return self._pass(lambda h: _c.ring_reclaim(h, fn))

    def read(self, timeout=0):
        """The records there now as a list of bytes, first waiting up to
        ``timeout`` seconds (None: without limit) when there is none."""
        out = []
        self._poll(_ms(timeout), out.extend if self.batch else out.append)
        return out

    def records(self, timeout=None):
        """Yield records as they arrive, ending after ``timeout`` seconds
        without a record (None: never)."""
        while True:
            batch = self.read(timeout)
            if not batch:
                return
            yield from batch

    def __iter__(self):
        return self.records()

    @property
    def drops(self):
        """Records producers dropped because the ring was full."""
        return _c.ring_drops(self._live())

    def stats(self):
        """{"records", "bytes", "drops", "rings", "copied"}: records and
        payload bytes handed out so far, drops, rings consumed, bytes of
        records copied out of GPU memory (once each, or twice where a
        record may have been published during the copy)."""
        return _c.ring_stats(self._live())

    def fileno(self):
        """A timerfd for selectors/asyncio: readable every millisecond, not
        when a record arrives (a GPU cannot signal one). Call consume() or
        read() when it is readable; that also resets it."""
        return _c.ring_fd(self._live())

    def _live(self):
        if self._h is None:
            raise InvalidArgument(f"the ring buffer of map '{self.map.name}' is closed")
        return self._h

    @property
    def closed(self):
        return self._h is None

    def close(self):
        """Free the consumer (the map stays); idempotent. Waits for a poll
        of another thread to return."""
        with self._lock:
            if self._h is None:
                return
            if self._busy:
                raise InvalidArgument("a ring buffer callback cannot poll or "
                                      "close its own ring buffer")
            _c.ring_free(self._h)
            self._h = None
            rings = self.map._obj._rings
            if self in rings:
                rings.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_h", None) is not None:
            self.close()

    def __repr__(self):
        state = "closed" if self._h is None else f"{self.drops} drops"
        return f"<egpu.RingBuffer of {self.map.name!r}, {state}>"
