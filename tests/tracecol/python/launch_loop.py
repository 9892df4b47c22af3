# SPDX-License-Identifier: MIT
"""A launch-bound eager PyTorch loop (issue 16's: 2,000 steps of 8 small
matmul + relu layers), timed around the loop only.

    python3 launch_loop.py [plain|proton|proton-shadow] [STEPS [SECONDS]]

Prints one line "loop_s=S steps=N": the loop stops after STEPS steps, or
at the first thousand-step mark past SECONDS seconds if given. `proton` profiles the
loop with Triton's Proton and its Python context, `proton-shadow` with its
default context (no Python frames); under `egpu trace` run it `plain`."""
import sys
import time

import torch

MODE = sys.argv[1] if len(sys.argv) > 1 else "plain"
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else None


class Layer(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(d, d) / d ** 0.5)

    def forward(self, x):
        return torch.relu(x @ self.w)


class Model(torch.nn.Module):
    def __init__(self, d=128, depth=8):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer(d) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


@torch.no_grad()
def train_step(model, x):
    return model(x)


def run(model, x, steps):
    for _ in range(steps):
        y = train_step(model, x)
    return y


def main():
    torch.manual_seed(0)
    model = Model().cuda()
    x = torch.randn(64, 128, device="cuda")
    run(model, x, 50)                       # warm up: cuBLAS, allocator
    torch.cuda.synchronize()
    if MODE.startswith("proton"):
        import triton.profiler as proton
        proton.start("launch_loop", context="python" if MODE == "proton"
                     else "shadow", backend="cupti")
    t0 = time.perf_counter()
    done = 0
    while done < STEPS:
        n = min(1000, STEPS - done) if SECONDS else STEPS
        run(model, x, n)
        done += n
        if SECONDS and time.perf_counter() - t0 > SECONDS:
            break
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    if MODE.startswith("proton"):
        proton.finalize()
    print(f"loop_s={dt:.4f} steps={done}", flush=True)


if __name__ == "__main__":
    main()
