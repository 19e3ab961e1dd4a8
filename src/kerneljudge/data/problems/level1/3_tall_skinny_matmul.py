"""Tall-skinny matrix multiplication: many rows, few columns, C = A @ B with A (M, K), M >> K."""
import torch
import torch.nn as nn

M = 131072
K = 512
N = 512  # ~69 GFLOP, ~1.4 ms; A and C 256 MiB each


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
SMALL = {"M": 8192, "K": 32, "N": 32}
HELD_OUT = [{"M": 100003, "K": 509, "N": 515}]
HELD_OUT_SMALL = [{"M": 4099, "K": 29, "N": 35}]
