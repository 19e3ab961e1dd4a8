"""Sum of a batch of matrix products (sum_b A_b @ B_b), plus a learned bias, then ReLU."""
import torch
import torch.nn as nn

batch = 16
m = 2048
k = 512
n = 2048  # ~69 GFLOP, ~1.5 ms


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(0.5 * torch.randn(n))

    def forward(self, a, b):
        y = torch.bmm(a, b).sum(dim=0)
        return torch.relu(y + self.bias)


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n) / (batch * k) ** 0.5]


def get_init_inputs():
    return [n]


# kerneljudge metadata
CATEGORY = "fusion-bmm"
TAGS = []
SMALL = {"batch": 4, "m": 32, "k": 24, "n": 40}
HELD_OUT = [{"batch": 13, "m": 2001, "k": 509, "n": 2047}]
HELD_OUT_SMALL = [{"batch": 3, "m": 11, "k": 13, "n": 17}]
