"""Grouped GEMM: each group of tokens times its own weight matrix, plus a per-group bias, then HardSwish."""
import torch
import torch.nn as nn
import torch.nn.functional as F

groups = 8
tokens = 2048
in_features = 2048
out_features = 2048  # ~137 GFLOP, ~3 ms


class Model(nn.Module):
    def __init__(self, groups, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(groups, in_features, out_features) / in_features ** 0.5)
        self.bias = nn.Parameter(0.3 * torch.randn(groups, 1, out_features))

    def forward(self, x):
        return F.hardswish(2.0 * (torch.matmul(x, self.weight) + self.bias))


def get_inputs():
    return [torch.randn(groups, tokens, in_features)]


def get_init_inputs():
    return [groups, in_features, out_features]


# kerneljudge metadata
CATEGORY = "fusion-matmul"
TAGS = []
SMALL = {"groups": 3, "tokens": 16, "in_features": 48, "out_features": 32}
HELD_OUT = [{"groups": 7, "tokens": 2001, "in_features": 2047, "out_features": 1999}]
HELD_OUT_SMALL = [{"groups": 2, "tokens": 9, "in_features": 21, "out_features": 19}]
