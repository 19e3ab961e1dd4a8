"""Exact (erf) GELU followed by a learned per-column scale: out = gelu(x) * scale."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 16384


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return F.gelu(x) * self.scale


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]


# kerneljudge metadata: never shown to a model
CATEGORY = "elementwise"
SMALL = {"batch_size": 8, "dim": 100}
HELD_OUT = [{"batch_size": 1021, "dim": 5003}]
HELD_OUT_SMALL = [{"batch_size": 3, "dim": 77}]
