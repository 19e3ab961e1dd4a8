"""Matrix multiplication with a small inner dimension (K = 32): C = A @ B, output-write bound."""
import torch
import torch.nn as nn

M = 32768
N = 16384
K = 32  # ~34 GFLOP, C is 2 GiB written once, ~1.3 ms


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
SMALL = {"M": 512, "N": 1024, "K": 32}
HELD_OUT = [{"M": 30011, "N": 15013, "K": 31}]
HELD_OUT_SMALL = [{"M": 301, "N": 517, "K": 19}]
