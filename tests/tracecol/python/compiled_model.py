# SPDX-License-Identifier: MIT
"""A torch.compile'd residual MLP called from predict(): traced by
test_trace_compile_gpu.py, whose flame graph must show predict()."""
import torch


class Mlp(torch.nn.Module):
    """A pre-norm residual MLP: layer norm, up, GELU, down (inductor fuses
    the norm and the activation into Triton kernels)."""

    def __init__(self, d=256):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up, self.down = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def predict(model, x):
    return model(x)


def main():
    torch.manual_seed(0)
    model = torch.compile(Mlp().cuda())
    x = torch.randn(4, 64, 256, device="cuda")
    with torch.no_grad():
        for _ in range(3):
            predict(model, x)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
