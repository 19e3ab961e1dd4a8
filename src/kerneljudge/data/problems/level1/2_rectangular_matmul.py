"""Rectangular matrix multiplication C = A @ B with A (M, K) and B (K, N)."""
import torch
import torch.nn as nn

M = 8192
K = 2048
N = 4096  # ~137 GFLOP, ~2.8 ms; 224 MiB


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = []
SMALL = {"M": 384, "K": 128, "N": 256}
HELD_OUT = [{"M": 5003, "K": 1999, "N": 3071}]
HELD_OUT_SMALL = [{"M": 131, "K": 75, "N": 203}]
