"""Matrix multiplication with a huge inner dimension and a small output: C = A @ B, A (M, K), K >> M, N."""
import torch
import torch.nn as nn

M = 256
N = 256
K = 262144  # ~34 GFLOP, A and B 256 MiB each, ~0.69 ms (needs split-K to fill the GPU)


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
SMALL = {"M": 16, "N": 16, "K": 65536}
HELD_OUT = [{"M": 253, "N": 259, "K": 250007}]
HELD_OUT_SMALL = [{"M": 13, "N": 19, "K": 40009}]
