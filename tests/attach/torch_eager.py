# SPDX-License-Identifier: MIT
"""A PyTorch eager script, unmodified by libegpu: tensor math on the GPU
(torch's own kernels, which ship as SASS plus PTX for the newest targets)
and one kernel of its own loaded from PTX through ctypes (as tools built on
the driver API do). Checks every result against the CPU."""
import ctypes
import sys

import torch

PTX = b"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry own_count(.param .u64 out)
{
	.reg .b64 %rd<3>;
	.reg .b32 %r<2>;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	atom.global.add.u32 %r1, [%rd2], 1;
	ret;
}
"""

x = torch.arange(1 << 16, dtype=torch.float32)
y = torch.linspace(0, 1, 1 << 16)
g = (x.cuda() * 2 + y.cuda()).relu().sum().item()
want = (x * 2 + y).relu().sum().item()
m = torch.arange(64 * 64, dtype=torch.float32).reshape(64, 64) / 4096
mm_ok = torch.allclose((m.cuda() @ m.cuda()).cpu(), m @ m, rtol=1e-4, atol=1e-4)

cu = ctypes.CDLL("libcuda.so.1")
mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
assert cu.cuModuleLoadData(ctypes.byref(mod), PTX) == 0
assert cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"own_count") == 0
out = torch.zeros(1, dtype=torch.int32, device="cuda")
ptr = ctypes.c_uint64(out.data_ptr())
args = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.pointer(ptr), ctypes.c_void_p))
assert cu.cuLaunchKernel(fn, 4, 1, 1, 64, 1, 1, 0, None, args, None) == 0
torch.cuda.synchronize()
own = out.item()

ok = abs(g - want) <= 1e-3 * abs(want) and mm_ok and own == 256
print(f"torch: sum {g:.1f} (cpu {want:.1f}), matmul {'ok' if mm_ok else 'WRONG'}, "
      f"own_count 4 x 64 threads -> {own}; results: {'correct' if ok else 'WRONG'}")
sys.exit(0 if ok else 1)
