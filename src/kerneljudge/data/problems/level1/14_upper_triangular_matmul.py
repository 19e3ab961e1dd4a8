"""Product of two upper-triangular matrices, kept upper-triangular: C = triu(A @ B)."""
import torch
import torch.nn as nn

N = 4096  # eager does a dense matmul: ~137 GFLOP, ~2.7 ms; 192 MiB


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.triu(torch.matmul(A, B))


def get_inputs():
    # A and B are upper-triangular (zeros below the diagonal)
    return [torch.triu(torch.randn(N, N)), torch.triu(torch.randn(N, N))]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = []
SMALL = {"N": 256}
HELD_OUT = [{"N": 3001}]
HELD_OUT_SMALL = [{"N": 97}]
