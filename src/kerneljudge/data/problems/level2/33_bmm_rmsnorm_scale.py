"""Batched matrix product, RMS normalisation over the last dimension, then a learned scale."""
import torch
import torch.nn as nn

batch = 16
m = 1024
k = 2048
n = 1024  # ~69 GFLOP, ~1.6 ms
eps = 1e-5


class Model(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.3 * torch.randn(n))
        self.eps = eps

    def forward(self, a, b):
        y = torch.bmm(a, b)
        return y * torch.rsqrt(y.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n) / k ** 0.5]


def get_init_inputs():
    return [n, eps]


# kerneljudge metadata
CATEGORY = "fusion-bmm"
TAGS = []
SMALL = {"batch": 2, "m": 32, "k": 64, "n": 48}
HELD_OUT = [{"batch": 11, "m": 1003, "k": 2047, "n": 1001}]
HELD_OUT_SMALL = [{"batch": 3, "m": 9, "k": 29, "n": 21}]
