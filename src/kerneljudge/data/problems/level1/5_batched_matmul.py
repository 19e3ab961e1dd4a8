"""Batched matrix multiplication (bmm): C[b] = A[b] @ B[b]."""
import torch
import torch.nn as nn

batch_size = 128
M = 512
K = 1024
N = 512  # ~69 GFLOP, ~1.4 ms; 640 MiB


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.bmm(A, B)


def get_inputs():
    return [torch.randn(batch_size, M, K), torch.randn(batch_size, K, N)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = []
SMALL = {"batch_size": 8, "M": 64, "K": 128, "N": 96}
HELD_OUT = [{"batch_size": 97, "M": 509, "K": 1031, "N": 517}]
HELD_OUT_SMALL = [{"batch_size": 5, "M": 37, "K": 75, "N": 61}]
