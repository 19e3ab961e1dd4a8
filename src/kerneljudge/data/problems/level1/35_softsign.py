"""Softsign activation: y = x / (1 + |x|)."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 81920  # 1.25 GiB in + out, temporaries |x| and 1+|x|: ~9.4 GB moved, ~2.4 ms, peak 3.75 GiB


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / (1 + torch.abs(x))


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
