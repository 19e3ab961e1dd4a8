"""Batched matrix product, add a learned bias over the output columns, then GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 32
m = 1024
k = 1024
n = 1024  # ~69 GFLOP, ~1.5 ms


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(0.5 * torch.randn(n))

    def forward(self, a, b):
        return F.gelu(torch.bmm(a, b) + self.bias)


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n) / k ** 0.5]


def get_init_inputs():
    return [n]


# kerneljudge metadata
CATEGORY = "fusion-bmm"
TAGS = []
SMALL = {"batch": 3, "m": 32, "k": 48, "n": 40}
HELD_OUT = [{"batch": 29, "m": 1001, "k": 1023, "n": 999}]
HELD_OUT_SMALL = [{"batch": 2, "m": 13, "k": 21, "n": 17}]
