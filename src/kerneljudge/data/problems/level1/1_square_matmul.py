"""Square matrix multiplication C = A @ B."""
import torch
import torch.nn as nn

N = 4096  # A, B, C: N x N; ~137 GFLOP, ~2.8 ms; 192 MiB


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = []
SMALL = {"N": 256}
HELD_OUT = [{"N": 3001}]
HELD_OUT_SMALL = [{"N": 97}]
