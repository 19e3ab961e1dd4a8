"""Two matrix products sharing the left operand, combined as (A @ B) * sigmoid(A @ C)."""
import torch
import torch.nn as nn

m = 4096
k = 2048
n = 4096  # 2 GEMMs, ~137 GFLOP, ~3 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, c):
        return torch.matmul(a, b) * torch.sigmoid(torch.matmul(a, c))


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n) / k ** 0.5, torch.randn(k, n) / k ** 0.5]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "fusion-matmul"
TAGS = []
SMALL = {"m": 32, "k": 64, "n": 48}
HELD_OUT = [{"m": 3001, "k": 2051, "n": 3999}]
HELD_OUT_SMALL = [{"m": 9, "k": 27, "n": 35}]
