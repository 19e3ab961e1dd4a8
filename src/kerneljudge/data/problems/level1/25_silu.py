"""SiLU activation: y = x * sigmoid(x)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 81920  # 1.25 GiB in + 1.25 GiB out: ~2.7 GB moved, ~0.78 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.silu(x)


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
