// SPDX-License-Identifier: MIT

package egpu

import (
	"encoding/binary"
	"errors"
	"fmt"

	"libegpu.dev/egpu/internal/capi"
)

// MapType is a map's type; the values are Linux's BPF_MAP_TYPE_* and
// bpftime's GPU types.
type MapType uint32

const (
	MapHash           MapType = 1
	MapArray          MapType = 2
	MapPerfEventArray MapType = 4
	MapPercpuArray    MapType = 6 // one value per GPU thread
	MapRingbuf        MapType = 27
	MapPerthreadArray MapType = 1502 // bpftime's per-thread array
	MapGPUArray       MapType = 1503
	MapGPURingbuf     MapType = 1527
	// bpftime's other GPU types, implemented by the types above.
	MapGPUHash              MapType = 1501 // a hash
	MapGPUKernelSharedArray MapType = 1504 // a GPU array
	MapPerthreadArrayHost   MapType = 1512 // 1502 in mapped host memory
	MapGPUArrayHost         MapType = 1513 // 1503 in mapped host memory
	MapThreadLocal          MapType = 4096 // per thread and launch, in registers; the host cannot read it
	MapSMArray              MapType = 4097 // one copy per SM; Lookup gives each, LookupSum the sum
)

// UpdateFlags are Map.Update's flags, as in Linux.
type UpdateFlags uint64

const (
	Any     UpdateFlags = 0 // create or replace
	NoExist UpdateFlags = 1 // create only: EEXIST if present
	Exist   UpdateFlags = 2 // replace only: ENOENT if absent
)

// Map is a map of a loaded object. Keys and values are byte slices of the
// map's sizes, in the program's (little-endian) layout; the Uint32/Uint64
// methods read and write maps with 4-byte keys and 8-byte values.
type Map struct {
	obj        *Obj
	h          capi.Struct_SS_egpu_map
	name       string
	typ        MapType
	keySize    int
	valueSize  int
	maxEntries uint32
}

func newMap(o *Obj, h capi.Struct_SS_egpu_map) *Map {
	return &Map{obj: o, h: h,
		name:       capi.Egpu_map_name(h),
		typ:        MapType(capi.Egpu_map_type(h)),
		keySize:    int(capi.Egpu_map_key_size(h)),
		valueSize:  int(capi.Egpu_map_value_size(h)),
		maxEntries: uint32(capi.Egpu_map_max_entries(h)),
	}
}

func (m *Map) Name() string       { return m.name }
func (m *Map) Type() MapType      { return m.typ }
func (m *Map) KeySize() int       { return m.keySize }
func (m *Map) ValueSize() int     { return m.valueSize }
func (m *Map) MaxEntries() uint32 { return m.maxEntries }

// ValuesPerKey is the number of values under each key: the GPU thread
// slots of a per-thread map or the SM copies of an SM array living in GPU
// memory, else 1.
func (m *Map) ValuesPerKey() int {
	defer m.obj.ctx.lock()()
	return m.valuesPerKey()
}

func (m *Map) valuesPerKey() int {
	if m.obj.live() != nil {
		return 1
	}
	return int(capi.Egpu_map_values_per_key(m.h))
}

// check refuses a closed map and a key or value of the wrong size.
func (m *Map) check(key []byte, value []byte, valueSize int) error {
	if err := m.obj.live(); err != nil {
		return err
	}
	if len(key) != m.keySize {
		return newError(EINVAL, fmt.Sprintf("map '%s': key of %d bytes, expected %d", m.name, len(key), m.keySize))
	}
	if value != nil && len(value) != valueSize {
		return newError(EINVAL, fmt.Sprintf("map '%s': value of %d bytes, expected %d", m.name, len(value), valueSize))
	}
	return nil
}

// Lookup returns the value stored under @key: ValueSize bytes, or for a
// per-thread map every thread's value (an SM array: every SM's),
// ValueSize * ValuesPerKey bytes.
func (m *Map) Lookup(key []byte) ([]byte, error) {
	value := make([]byte, m.valueSize*m.ValuesPerKey())
	return value, m.LookupInto(key, value)
}

// LookupInto is Lookup into the caller's @value, which must have
// ValueSize * ValuesPerKey bytes.
func (m *Map) LookupInto(key, value []byte) error {
	defer m.obj.ctx.lock()()
	if err := m.check(key, value, m.valueSize*m.valuesPerKey()); err != nil {
		return err
	}
	_, err := call(func() int { return capi.Egpu_map_lookup_values(m.h, key, value) })
	return err
}

// LookupSum returns every thread's value under @key added up word by word
// (8-byte words when ValueSize is a multiple of 8, else 4-byte words); for
// other maps the value itself.
func (m *Map) LookupSum(key []byte) ([]byte, error) {
	sum := make([]byte, m.valueSize)
	defer m.obj.ctx.lock()()
	if err := m.check(key, sum, m.valueSize); err != nil {
		return nil, err
	}
	_, err := call(func() int { return capi.Egpu_map_lookup_sum(m.h, key, sum) })
	return sum, err
}

// Update stores @value under @key.
func (m *Map) Update(key, value []byte, flags UpdateFlags) error {
	defer m.obj.ctx.lock()()
	if err := m.check(key, value, m.valueSize); err != nil {
		return err
	}
	_, err := call(func() int { return capi.Egpu_map_update(m.h, key, value, uint64(flags)) })
	return err
}

// Delete removes @key (array maps: EINVAL, as in Linux).
func (m *Map) Delete(key []byte) error {
	defer m.obj.ctx.lock()()
	if err := m.check(key, nil, 0); err != nil {
		return err
	}
	_, err := call(func() int { return capi.Egpu_map_delete(m.h, key) })
	return err
}

// NextKey returns the key after @key in iteration order (@key nil: the
// first key), or nil after the last.
func (m *Map) NextKey(key []byte) ([]byte, error) {
	defer m.obj.ctx.lock()()
	if key != nil {
		if err := m.check(key, nil, 0); err != nil {
			return nil, err
		}
	} else if err := m.obj.live(); err != nil {
		return nil, err
	}
	next := make([]byte, m.keySize)
	_, err := call(func() int { return capi.Egpu_map_next_key(m.h, key, next) })
	if errors.Is(err, ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return next, nil
}

// MapIterator walks a map's keys and values:
//
//	it := m.Iterate()
//	for it.Next() {
//		use(it.Key(), it.Value())
//	}
//	if err := it.Err(); err != nil { ... }
type MapIterator struct {
	m     *Map
	key   []byte
	value []byte
	err   error
}

// Iterate starts a walk over the map. Keys deleted meanwhile are skipped.
func (m *Map) Iterate() *MapIterator { return &MapIterator{m: m} }

// Next moves to the next key; false at the end or on an error (see Err).
func (it *MapIterator) Next() bool {
	for it.err == nil {
		next, err := it.m.NextKey(it.key)
		if err != nil || next == nil {
			it.err = err
			return false
		}
		it.key = next
		it.value, err = it.m.Lookup(next)
		if !errors.Is(err, ENOENT) {
			it.err = err
			return err == nil
		}
	}
	return false
}

func (it *MapIterator) Key() []byte   { return it.key }
func (it *MapIterator) Value() []byte { return it.value }
func (it *MapIterator) Err() error    { return it.err }

// The typed helpers, for maps with 4-byte keys and 8-byte values.

func (m *Map) checkUint32Uint64() error {
	if m.keySize != 4 || m.valueSize != 8 {
		return newError(EINVAL, fmt.Sprintf("map '%s': key %d and value %d bytes, not 4 and 8", m.name, m.keySize, m.valueSize))
	}
	return nil
}

func u32(k uint32) []byte { return binary.LittleEndian.AppendUint32(nil, k) }

// LookupUint64 returns the value under @key (per-thread maps: thread 0's).
func (m *Map) LookupUint64(key uint32) (uint64, error) {
	vals, err := m.ValuesUint64(key)
	if err != nil {
		return 0, err
	}
	return vals[0], nil
}

// ValuesUint64 returns every thread's value under @key (one value for a
// map that is not per-thread).
func (m *Map) ValuesUint64(key uint32) ([]uint64, error) {
	if err := m.checkUint32Uint64(); err != nil {
		return nil, err
	}
	raw, err := m.Lookup(u32(key))
	if err != nil {
		return nil, err
	}
	vals := make([]uint64, len(raw)/8)
	for i := range vals {
		vals[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	return vals, nil
}

// SumUint64 returns every thread's value under @key added up.
func (m *Map) SumUint64(key uint32) (uint64, error) {
	if err := m.checkUint32Uint64(); err != nil {
		return 0, err
	}
	raw, err := m.LookupSum(u32(key))
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(raw), nil
}

// UpdateUint64 stores @value under @key.
func (m *Map) UpdateUint64(key uint32, value uint64, flags UpdateFlags) error {
	if err := m.checkUint32Uint64(); err != nil {
		return err
	}
	return m.Update(u32(key), binary.LittleEndian.AppendUint64(nil, value), flags)
}

// DeleteUint32 removes @key.
func (m *Map) DeleteUint32(key uint32) error {
	if err := m.checkUint32Uint64(); err != nil {
		return err
	}
	return m.Delete(u32(key))
}
