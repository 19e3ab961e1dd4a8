"""Matrix product of two inputs, multiplied by a constant, plus a third input, then ReLU."""
import torch
import torch.nn as nn

m = 4096
k = 4096
n = 4096  # ~137 GFLOP, ~3 ms
alpha = 0.75


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, a, b, c):
        return torch.relu(torch.matmul(a, b) * self.alpha + c)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n) / k ** 0.5, torch.randn(m, n)]


def get_init_inputs():
    return [alpha]


# kerneljudge metadata
CATEGORY = "fusion-matmul"
TAGS = []
SMALL = {"m": 48, "k": 64, "n": 80}
HELD_OUT = [{"m": 3001, "k": 4099, "n": 2999}]
HELD_OUT_SMALL = [{"m": 13, "k": 37, "n": 29}]
