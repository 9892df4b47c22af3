// SPDX-License-Identifier: MIT

package egpu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"unsafe"
)

// Record flags of a chunk or a record file (egpu.h's EGPU_REC_*): each
// record is an 8-byte header {len, flags} and its payload padded to 8.
const (
	RecCommit  = 1  // published (a reclaimed span lacks it)
	RecDiscard = 2  // padding: ChunkRecords skips it
	RecBatch   = 4  // a warp's batch: u32 count, u32 len, words column-major
	RecSpan    = 16 // a span (bpf_egpu_trace_span)
)

// ChunkRecord is one record of a chunk: its payload, a slice of the
// chunk's bytes (no copy), and its flags.
type ChunkRecord struct {
	Data  []byte
	Flags uint32
}

// ChunkRecords walks chunk (whole records in the ring's format: what a
// chunk callback gets, or a record file's body) and calls fn for each
// record but discards, in order; fn's error stops the walk. EFORMAT for
// a record that runs past the chunk.
func ChunkRecords(chunk []byte, fn func(ChunkRecord) error) error {
	for off := 0; off < len(chunk); {
		if len(chunk)-off < 8 {
			return newError(EFORMAT, fmt.Sprintf("egpu: a record header cut short at offset %d", off))
		}
		size := int(binary.LittleEndian.Uint32(chunk[off:]))
		flags := binary.LittleEndian.Uint32(chunk[off+4:])
		next := off + 8 + (size+7)&^7
		if size > len(chunk) || next > len(chunk) {
			return newError(EFORMAT, fmt.Sprintf("egpu: the record at offset %d (%d bytes) is cut short", off, size))
		}
		if flags&RecDiscard == 0 {
			if err := fn(ChunkRecord{chunk[off+8 : off+8+size : off+8+size], flags}); err != nil {
				return err
			}
		}
		off = next
	}
	return nil
}

// ReadRecordFile reads a record file (egpu_ringbuf_opts.path): its header
// checked, the records after it as one chunk for ChunkRecords.
func ReadRecordFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, newError(EIO, "egpu: "+err.Error())
	}
	if len(b) < 16 || !bytes.Equal(b[:8], []byte("EGPU-REC")) {
		return nil, newError(EFORMAT, "egpu: '"+path+"' is no record file")
	}
	version, start := binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:])
	if version < 1 || version > 3 || start < 16 || start%8 != 0 || int(start) > len(b) {
		return nil, newError(EFORMAT, fmt.Sprintf("egpu: '%s' is no record file of version 1 to 3", path))
	}
	return b[start:], nil
}

// SpanInfo names the warp whose accesses a span holds.
type SpanInfo struct {
	Block uint32
	Warp  uint16
	SMID  uint16
}

// AffineRecord is the layout of a 16-byte affine span record (every
// active lane at Base + (lane - lowest) * Stride), for slices over a
// span's bytes (SpanSlots); a scattered record's slots hold deltas, and
// a slot may hold two 8-byte short records instead (DecodeSpan reads
// them).
type AffineRecord struct {
	Info uint32 // format (2 bits), delta width (2), kind (3), size (6), site (19)
	Mask uint32 // the active lanes
	W1   uint64 // base (48 bits), stride (signed, 16)
}

func (a AffineRecord) Format() uint32 { return a.Info & 3 }
func (a AffineRecord) Kind() uint8    { return uint8(a.Info >> 4 & 7) }
func (a AffineRecord) Size() uint32   { return a.Info >> 7 & 63 }
func (a AffineRecord) Site() uint32   { return a.Info >> 13 }
func (a AffineRecord) Base() uint64   { return a.W1 & (1<<48 - 1) }
func (a AffineRecord) Stride() int64  { return int64(int16(a.W1 >> 48)) }

const (
	spanAffine    = 1
	spanScattered = 2
	spanLong      = 3
)

// SpanSlots is span's records' slots (span: a span record's payload, 8
// bytes of SpanInfo then 16-byte slots) as a slice over the same memory,
// no copy. span must be 8-aligned (as a chunk's and a file's records
// are) and stay alive while the slice is used.
func SpanSlots(span []byte) ([]AffineRecord, error) {
	if len(span) < 8 || (len(span)-8)%16 != 0 {
		return nil, newError(EFORMAT, fmt.Sprintf("egpu: %d bytes are no span record (8 + a multiple of 16)", len(span)))
	}
	if len(span) == 8 {
		return nil, nil
	}
	if uintptr(unsafe.Pointer(&span[8]))%8 != 0 {
		return nil, newError(EINVAL, "egpu: a span's bytes are not 8-aligned")
	}
	return unsafe.Slice((*AffineRecord)(unsafe.Pointer(&span[8])), (len(span)-8)/16), nil
}

// SpanAccess is one warp access of a span, decoded: Addrs[i] is the
// address of the i-th lane of Mask, in lane order.
type SpanAccess struct {
	Mask   uint32
	Site   uint32
	Size   uint32
	Kind   uint8
	Affine bool
	Stride int64 // affine only
	Addrs  []uint64
}

// DecodeSpan gives a span record's owner and every access in it, each
// lane's address (the layout of lib/maps/span_layout.h, as egpu_span_next
// decodes it). EFORMAT for a malformed span.
func DecodeSpan(span []byte) (SpanInfo, []SpanAccess, error) {
	slots, err := SpanSlots(span)
	if err != nil {
		return SpanInfo{}, nil, err
	}
	info := SpanInfo{binary.LittleEndian.Uint32(span), binary.LittleEndian.Uint16(span[4:]),
		binary.LittleEndian.Uint16(span[6:])}
	var out []SpanAccess
	for at := 8; at+8 <= len(span); {
		w0 := binary.LittleEndian.Uint64(span[at:])
		half := (at-8)%16 != 0
		switch {
		case w0 == 0 && !half: // the end: unused slots read zero
			return info, out, nil
		case w0 == 0: // padding after a short record
			at += 8
		case w0&3 == spanAffine && w0>>2&3 != 0:
			out = append(out, decodeShort(w0))
			at += 8
		case half:
			return info, out, newError(EFORMAT, fmt.Sprintf("egpu: a span record of format %d in a slot's second half", w0&3))
		default:
			acc, n, err := decodeRecord(slots[(at-8)/16:], span[at:])
			if err != nil {
				return info, out, err
			}
			out = append(out, acc)
			at += 16 * n
		}
	}
	return info, out, nil
}

// decodeShort decodes a short record (8 bytes: a whole warp, lane i at
// lane 0's address + i * size; lib/core/span_record.h) as the affine
// record it stands for.
func decodeShort(w uint64) SpanAccess {
	size := uint32(2) << (w >> 2 & 3)
	kind, site := uint32(w>>4&3)+1, uint32(w>>6&0x3ff)
	return affineAccess(AffineRecord{Info: spanAffine | kind<<4 | size<<7 | site<<13,
		Mask: ^uint32(0), W1: w>>16 | uint64(size)<<48})
}

// affineAccess decodes an affine record: each lane of its mask at
// Base + (lane - lowest) * Stride.
func affineAccess(r AffineRecord) SpanAccess {
	a := SpanAccess{Mask: r.Mask, Site: r.Site(), Size: r.Size(), Kind: r.Kind(),
		Affine: true, Stride: r.Stride(), Addrs: make([]uint64, 0, bits.OnesCount32(r.Mask))}
	low := bits.TrailingZeros32(r.Mask)
	for m := r.Mask; m != 0; m &= m - 1 {
		a.Addrs = append(a.Addrs, r.Base()+uint64(int64(bits.TrailingZeros32(m)-low)*a.Stride))
	}
	return a
}

// decodeRecord decodes the record at the first of slots (raw: the same
// bytes): the access and the slots it took.
func decodeRecord(slots []AffineRecord, raw []byte) (SpanAccess, int, error) {
	r := slots[0]
	lanes := bits.OnesCount32(r.Mask)
	a := SpanAccess{Mask: r.Mask, Site: r.Site(), Size: r.Size(), Kind: r.Kind(),
		Addrs: make([]uint64, 0, lanes)}
	width := uint(r.Info >> 2 & 3)
	n := 1
	if r.Format() != spanAffine {
		n += (lanes<<width + 15) / 16
	}
	if r.Format() == spanLong {
		n++
	}
	if r.Format() == 0 || r.Mask == 0 || n > len(slots) {
		return a, 0, newError(EFORMAT, fmt.Sprintf("egpu: a span record of format %d, lanes %#x, %d slots, where %d are left", r.Format(), r.Mask, n, len(slots)))
	}
	if r.Format() == spanAffine {
		return affineAccess(r), n, nil
	}
	deltas := raw[16:]
	if r.Format() == spanLong {
		a.Site = binary.LittleEndian.Uint32(raw[16:])
		a.Size = uint32(binary.LittleEndian.Uint16(raw[20:]))
		a.Kind = raw[22]
		deltas = raw[32:]
	}
	for j := 0; j < lanes; j++ {
		a.Addrs = append(a.Addrs, r.W1+uint64(delta(deltas, width, j)))
	}
	return a, n, nil
}

// delta is the j-th signed delta of 1 << width bytes at p.
func delta(p []byte, width uint, j int) int64 {
	switch width {
	case 0:
		return int64(int8(p[j]))
	case 1:
		return int64(int16(binary.LittleEndian.Uint16(p[2*j:])))
	case 2:
		return int64(int32(binary.LittleEndian.Uint32(p[4*j:])))
	}
	return int64(binary.LittleEndian.Uint64(p[8*j:]))
}
