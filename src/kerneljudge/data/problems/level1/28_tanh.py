"""Hyperbolic tangent activation: y = tanh(x)."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 81920  # 1.25 GiB in + 1.25 GiB out: ~2.7 GB moved, ~0.81 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.tanh(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "activation"
TAGS = []
SMALL = {"batch_size": 16, "dim": 4096}
HELD_OUT = [{"batch_size": 3001, "dim": 100003}]
HELD_OUT_SMALL = [{"batch_size": 7, "dim": 1531}]
