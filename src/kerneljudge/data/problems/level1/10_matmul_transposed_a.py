"""Matrix multiplication with the first operand stored transposed: C = A.T @ B, A stored as (K, M)."""
import torch
import torch.nn as nn

M = 4096
K = 6144
N = 3072  # ~155 GFLOP, ~3.0 ms; 240 MiB


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A.T, B)


def get_inputs():
    return [torch.randn(K, M), torch.randn(K, N)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = []
SMALL = {"M": 192, "K": 256, "N": 128}
HELD_OUT = [{"M": 4001, "K": 6007, "N": 3001}]
HELD_OUT_SMALL = [{"M": 97, "K": 131, "N": 75}]
