"""Batched matrix product, max over adjacent column pairs, then LeakyReLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 32
m = 1024
k = 1024
n = 1024  # ~69 GFLOP, ~1.5 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        y = torch.bmm(a, b)
        y = y.view(y.shape[0], y.shape[1], -1, 2).amax(dim=-1)
        return F.leaky_relu(y, 0.2)


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n) / k ** 0.5]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "fusion-bmm"
TAGS = []
SMALL = {"batch": 3, "m": 32, "k": 48, "n": 40}
HELD_OUT = [{"batch": 27, "m": 1001, "k": 1023, "n": 1002}]
HELD_OUT_SMALL = [{"batch": 2, "m": 9, "k": 19, "n": 22}]
