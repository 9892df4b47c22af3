# SPDX-License-Identifier: MIT
"""A torch.compile'd transformer block called from predict(): traced by
test_trace_compile_gpu.py, whose flame graph must show predict()."""
import torch


class Block(torch.nn.Module):
    def __init__(self, d=256, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.up, self.down = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(torch.nn.functional.gelu(self.up(self.ln2(x))))


def predict(model, x):
    return model(x)


def main():
    torch.manual_seed(0)
    model = torch.compile(Block().cuda())
    x = torch.randn(4, 64, 256, device="cuda")
    with torch.no_grad():
        for _ in range(3):
            predict(model, x)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
