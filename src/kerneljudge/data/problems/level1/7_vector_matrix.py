"""Vector-matrix product y = x @ B with x (1, K) and B (K, N)."""
import torch
import torch.nn as nn

K = 16384
N = 49152  # B is 3 GiB, read once: ~3.2 GB moved, ~0.75 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, B):
        return torch.matmul(x, B)


def get_inputs():
    return [torch.randn(1, K), torch.randn(K, N)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "matmul"
TAGS = []
SMALL = {"K": 1024, "N": 2048}
HELD_OUT = [{"K": 15001, "N": 45007}]
HELD_OUT_SMALL = [{"K": 777, "N": 1533}]
