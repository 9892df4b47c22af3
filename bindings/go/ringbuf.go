// SPDX-License-Identifier: MIT

package egpu

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"libegpu.dev/egpu/internal/capi"
)

// ringPollSlice bounds each wait of the consuming goroutine, so Close
// takes effect within it.
const ringPollSlice = 50 * time.Millisecond

// RingBuffer consumes a ring map (MapRingbuf, MapPerfEventArray,
// MapGPURingbuf): a goroutine polls the ring and sends each record, a copy
// of its payload, on Records. A GPU cannot wake the host, so the goroutine
// sleep-polls (a record is seen within a millisecond, see docs/events.md).
//
//	rb, err := m.RingBuffer()
//	defer rb.Close()
//	for rec := range rb.Records() { ... }
//
// Close it before closing its object (closing the object or the context
// closes it too).
type RingBuffer struct {
	m       *Map
	h       capi.Struct_SS_go_ring
	records chan []byte
	stop    chan struct{}
	done    chan struct{}
	drops   atomic.Uint64
	err     error // why the goroutine stopped; read once done is closed
	closing sync.Once
	chunks  bool // Records sends chunks (RingBufferChunks)
}

// RingBuffer starts consuming ring map @m; a map has one consumer at a
// time (EINVAL for a second, and for a map that is not a ring).
func (m *Map) RingBuffer() (*RingBuffer, error) { return m.newRing(false) }

// RingBufferChunks is RingBuffer, but Records sends chunks: each the
// bytes of many whole records as the ring held them (an 8-byte header
// {size, flags} and the payload padded to 8; egpu.h's
// egpu_ringbuf_opts.chunk_fn), with no work per record on the way. Walk
// one with ChunkRecords; a span ring's records go to DecodeSpan.
func (m *Map) RingBufferChunks() (*RingBuffer, error) { return m.newRing(true) }

func (m *Map) newRing(chunks bool) (*RingBuffer, error) {
	defer m.obj.ctx.lock()()
	if err := m.obj.live(); err != nil {
		return nil, err
	}
	asChunks := 0
	if chunks {
		asChunks = 1
	}
	h, err := handle(EINVAL, func() capi.Struct_SS_go_ring { return capi.Ring_new(m.h, asChunks) })
	if err != nil {
		return nil, err
	}
	rb := &RingBuffer{m: m, h: h, chunks: chunks, records: make(chan []byte, 256),
		stop: make(chan struct{}), done: make(chan struct{})}
	m.obj.rings = append(m.obj.rings, rb)
	go rb.run()
	return rb, nil
}

// Records delivers the records in the ring's order. It is closed by Close
// (records not yet received are then lost) or when consuming fails (Err).
func (rb *RingBuffer) Records() <-chan []byte { return rb.records }

// Drops is the number of records producers dropped because the ring was
// full, as of the goroutine's last poll.
func (rb *RingBuffer) Drops() uint64 { return rb.drops.Load() }

// Err says why Records was closed: nil after Close, else the failure.
// Call it after Records is closed.
func (rb *RingBuffer) Err() error {
	select {
	case <-rb.done:
		return rb.err
	default:
		return nil
	}
}

// Close stops the goroutine (within ringPollSlice), closes Records and
// frees the consumer; the map stays. A second Close does nothing.
func (rb *RingBuffer) Close() {
	rb.closing.Do(func() {
		close(rb.stop)
		<-rb.done
		o := rb.m.obj
		defer o.ctx.lock()()
		capi.Ring_free(rb.h)
		o.rings = without(o.rings, rb)
	})
}

func (rb *RingBuffer) run() {
	defer close(rb.done)
	defer close(rb.records)
	for {
		select {
		case <-rb.stop:
			return
		default:
		}
		batch, err := rb.poll()
		if err != nil {
			rb.err = err
			return
		}
		for _, rec := range batch {
			select {
			case rb.records <- rec:
			case <-rb.stop:
				return
			}
		}
	}
}

// poll collects the records there, waiting up to ringPollSlice for one.
func (rb *RingBuffer) poll() ([][]byte, error) {
	n, err := call(func() int { return capi.Ring_poll(rb.h, int(ringPollSlice/time.Millisecond)) })
	rb.drops.Store(capi.Ring_drops(rb.h))
	if Errno(n) == ENOMEM {
		return nil, newError(ENOMEM, "egpu: ring buffer of map '"+rb.m.name+"': out of memory for a batch of records")
	}
	if err != nil || n == 0 {
		return nil, err
	}
	buf := make([]byte, capi.Ring_pending(rb.h))
	capi.Ring_take(rb.h, buf)
	if rb.chunks {
		return [][]byte{buf}, nil // the pass's chunks, whole records
	}
	batch := make([][]byte, 0, n)
	for len(buf) >= 4 {
		size := int(binary.LittleEndian.Uint32(buf))
		batch = append(batch, buf[4:4+size:4+size])
		buf = buf[4+size:]
	}
	return batch, nil
}
