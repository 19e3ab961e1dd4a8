"""Matrix product plus an additive input, LayerNorm over the last dimension, then GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

m = 4096
k = 4096
n = 4096  # ~137 GFLOP, ~3.2 ms


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.norm = nn.LayerNorm(n)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(n))
            self.norm.bias.copy_(0.2 * torch.randn(n))

    def forward(self, a, b, c):
        return F.gelu(self.norm(torch.matmul(a, b) + c))


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n) / k ** 0.5, torch.randn(m, n)]


def get_init_inputs():
    return [n]


# kerneljudge metadata
CATEGORY = "fusion-matmul"
TAGS = []
SMALL = {"m": 32, "k": 64, "n": 96}
HELD_OUT = [{"m": 2999, "k": 4097, "n": 3001}]
HELD_OUT_SMALL = [{"m": 7, "k": 31, "n": 45}]
