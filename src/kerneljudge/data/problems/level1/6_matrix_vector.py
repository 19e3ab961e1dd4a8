"""Matrix-vector product y = A @ x with A (M, K) and x (K, 1)."""
import torch
import torch.nn as nn

M = 12288
K = 65536  # A is 3 GiB, read once: ~3.2 GB moved, ~0.79 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, x):
        return torch.matmul(A, x)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = []
SMALL = {"M": 512, "K": 4096}
HELD_OUT = [{"M": 10007, "K": 60001}]
HELD_OUT_SMALL = [{"M": 301, "K": 3001}]
