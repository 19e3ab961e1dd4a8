"""Batched matrix product followed by LayerNorm over the output rows."""
import torch
import torch.nn as nn

batch = 16
m = 1024
k = 1024
n = 2048  # ~69 GFLOP + norm over 128 MB, ~1.6 ms


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.norm = nn.LayerNorm(n)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(n))
            self.norm.bias.copy_(0.2 * torch.randn(n))

    def forward(self, a, b):
        return self.norm(torch.bmm(a, b))


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n)]


def get_init_inputs():
    return [n]


# kerneljudge metadata
CATEGORY = "fusion-bmm"
TAGS = []
SMALL = {"batch": 2, "m": 32, "k": 48, "n": 64}
HELD_OUT = [{"batch": 13, "m": 999, "k": 1001, "n": 2047}]
HELD_OUT_SMALL = [{"batch": 3, "m": 9, "k": 23, "n": 31}]
