# SPDX-License-Identifier: MIT
"""libegpu's instrumentation time per Triton kernel (egpu.triton's
instrument_ms): the softmax and the three autotuned matmul configurations
of test_frameworks_gpu.py, with the kernel-count probe.

    python3 triton_instrument_ms.py KERNEL_COUNT_BPF_O"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import egpu.triton  # noqa: E402
from test_frameworks_gpu import matmul, new_probe, softmax  # noqa: E402

obj = new_probe(sys.argv[1])
x = torch.randn(1823, 781, device="cuda")
a = torch.randn(512, 384, device="cuda", dtype=torch.float16)
b = torch.randn(384, 640, device="cuda", dtype=torch.float16)
with egpu.triton.instrument(obj) as inst:
    softmax(x)
    matmul(a, b)
torch.cuda.synchronize()
ms = inst.instrument_ms
print("instrument_ms per kernel:", ", ".join(f"{m:.2f}" for m in ms),
      f"(mean {sum(ms) / len(ms):.2f} over {len(ms)} kernels:",
      ", ".join(k.name for _, k in inst.kernels) + ")")
