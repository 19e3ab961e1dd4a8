"""3D tensor times matrix: C[n] = A[n] @ B for A (batch, M, K) and a shared B (K, N)."""
import torch
import torch.nn as nn

batch_size = 16
M = 1024
K = 2048
N = 2048  # ~137 GFLOP, ~2.8 ms; 272 MiB


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(batch_size, M, K), torch.randn(K, N)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = []
SMALL = {"batch_size": 4, "M": 64, "K": 128, "N": 96}
HELD_OUT = [{"batch_size": 13, "M": 1001, "K": 2047, "N": 1999}]
HELD_OUT_SMALL = [{"batch_size": 3, "M": 37, "K": 75, "N": 61}]
