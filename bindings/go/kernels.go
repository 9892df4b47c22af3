// SPDX-License-Identifier: MIT

package egpu

import (
	"errors"

	"libegpu.dev/egpu/internal/capi"
)

// KernelInfo is a kernel a context instrumented. Its ID is unique among
// every kernel of the context and the same again for the same kernel of
// the same module text: probes see it as ctx->kernel_id.
type KernelInfo struct {
	ID         uint32
	Name       string // mangled, as in the PTX
	Demangled  string
	Module     uint32 // index of its module text in the context
	ModuleHash uint64 // FNV-1a hash of that text
	Index      uint32 // position among the module's kernels
}

// Kernel describes kernel @id (ENOENT if the context never gave it).
func (c *Context) Kernel(id uint32) (KernelInfo, error) {
	if err := c.live(); err != nil {
		return KernelInfo{}, err
	}
	k := capi.NewEgpu_kernel_info_t()
	if k.Swigcptr() == 0 {
		return KernelInfo{}, newError(ENOMEM, "egpu: out of memory for a kernel info")
	}
	defer capi.DeleteEgpu_kernel_info_t(k)
	if _, err := call(func() int { return capi.Egpu_kernel_info(c.h, uint(id), k) }); err != nil {
		return KernelInfo{}, err
	}
	return KernelInfo{ID: id, Name: k.GetName(), Demangled: k.GetDemangled(),
		Module: uint32(k.GetModule()), ModuleHash: uint64(k.GetModule_hash()),
		Index: uint32(k.GetIndex())}, nil
}

// Kernels lists every kernel the context instrumented, by ID.
func (c *Context) Kernels() ([]KernelInfo, error) {
	if err := c.live(); err != nil {
		return nil, err
	}
	var out []KernelInfo
	for id := uint32(0); id < uint32(capi.Egpu_kernel_cnt(c.h)); id++ {
		k, err := c.Kernel(id)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// addWords adds @b into @a word by word, as LookupSum sums values.
func addWords(a, b []byte) {
	word := 8
	if len(a)%8 != 0 {
		word = 4
	}
	for off := 0; off+word <= len(a); off += word {
		var carry uint64
		for i := 0; i < word; i++ {
			s := uint64(a[off+i]) + uint64(b[off+i]) + carry
			a[off+i], carry = byte(s), s>>8
		}
	}
}

// ByKernel reads a map keyed by kernel id (4- or 8-byte keys) per kernel
// name: demangled name -> the values of every id of that name summed as
// LookupSum does (a kernel compiled several times, one module per
// kernel, reads as one). Kernels without an entry are left out.
func (m *Map) ByKernel() (map[string][]byte, error) {
	if m.keySize != 4 && m.keySize != 8 {
		return nil, newError(EINVAL, "egpu: map '"+m.name+"': keys are not kernel ids (4 or 8 bytes)")
	}
	if err := m.obj.live(); err != nil {
		return nil, err
	}
	kernels, err := m.obj.ctx.Kernels()
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, k := range kernels {
		key := make([]byte, m.keySize)
		key[0], key[1], key[2], key[3] = byte(k.ID), byte(k.ID>>8), byte(k.ID>>16), byte(k.ID>>24)
		v, err := m.LookupSum(key)
		if errors.Is(err, ENOENT) || errors.Is(err, E2BIG) {
			continue // no entry, or beyond the array
		}
		if err != nil {
			return nil, err
		}
		if sum, ok := out[k.Demangled]; ok {
			addWords(sum, v)
		} else {
			out[k.Demangled] = v
		}
	}
	return out, nil
}
