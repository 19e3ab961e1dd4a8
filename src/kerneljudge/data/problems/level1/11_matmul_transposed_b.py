"""Matrix multiplication with the second operand stored transposed: C = A @ B.T, B stored as (N, K)."""
import torch
import torch.nn as nn

M = 4096
K = 6144
N = 3072  # ~155 GFLOP, ~3.0 ms; 216 MiB


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B.T)


def get_inputs():
    return [torch.randn(M, K), torch.randn(N, K)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = []
SMALL = {"M": 192, "K": 256, "N": 128}
HELD_OUT = [{"M": 4001, "K": 6007, "N": 3001}]
HELD_OUT_SMALL = [{"M": 97, "K": 131, "N": 75}]
