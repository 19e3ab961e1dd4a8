"""Diagonal scaling written as a matmul: C = diag(a) @ B, i.e. row i of B scaled by a[i]."""
import torch
import torch.nn as nn

N = 4096
M = 8192  # eager builds the N x N diagonal and does a dense matmul: ~275 GFLOP, ~5.4 ms; 320 MiB


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, B):
        return torch.diag(a) @ B


def get_inputs():
    return [torch.randn(N), torch.randn(N, M)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = []
SMALL = {"N": 256, "M": 512}
HELD_OUT = [{"N": 4001, "M": 7001}]
HELD_OUT_SMALL = [{"N": 97, "M": 203}]
