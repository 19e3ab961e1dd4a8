"""Short-wide matrix multiplication: few rows, very wide output, C = A @ B with A (M, K), B (K, N), N >> M."""
import torch
import torch.nn as nn

M = 256
K = 4096
N = 65536  # ~137 GFLOP, ~2.7 ms; B 1 GiB, C 64 MiB


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
SMALL = {"M": 16, "K": 128, "N": 8192}
HELD_OUT = [{"M": 251, "K": 4093, "N": 50001}]
HELD_OUT_SMALL = [{"M": 13, "K": 131, "N": 5003}]
