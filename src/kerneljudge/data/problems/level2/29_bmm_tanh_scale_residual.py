"""Batched matrix product, tanh, multiply by a constant, then add a residual input."""
import torch
import torch.nn as nn

batch = 64
m = 512
k = 1024
n = 1024  # ~69 GFLOP, ~1.6 ms
alpha = 1.5


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, a, b, residual):
        return residual + self.alpha * torch.tanh(torch.bmm(a, b))


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n) / k ** 0.5, torch.randn(batch, m, n)]


def get_init_inputs():
    return [alpha]


# kerneljudge metadata
CATEGORY = "fusion-bmm"
TAGS = []
SMALL = {"batch": 4, "m": 16, "k": 48, "n": 32}
HELD_OUT = [{"batch": 61, "m": 509, "k": 1021, "n": 1003}]
HELD_OUT_SMALL = [{"batch": 3, "m": 7, "k": 19, "n": 25}]
