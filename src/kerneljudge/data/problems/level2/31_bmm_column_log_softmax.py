"""Batched matrix product scaled by 1/sqrt(k), then log-softmax down the columns (over the row index)."""
import torch
import torch.nn as nn

batch = 32
m = 1024
k = 1024
n = 1024  # ~69 GFLOP + strided reduction over 128 MB, ~1.6 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        scores = torch.bmm(a, b) * (a.shape[-1] ** -0.5)
        return torch.log_softmax(scores, dim=1)


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "fusion-bmm"
TAGS = []
SMALL = {"batch": 3, "m": 32, "k": 48, "n": 40}
HELD_OUT = [{"batch": 31, "m": 1003, "k": 999, "n": 1001}]
HELD_OUT_SMALL = [{"batch": 2, "m": 15, "k": 17, "n": 23}]
