"""HardTanh activation: y = clamp(x, min_val, max_val)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 81920  # 1.25 GiB in + 1.25 GiB out: ~2.7 GB moved, ~0.79 ms
min_val = -1.0
max_val = 1.0


class Model(nn.Module):
    def __init__(self, min_val, max_val):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x):
        return F.hardtanh(x, min_val=self.min_val, max_val=self.max_val)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [min_val, max_val]


# kerneljudge metadata
CATEGORY = "activation"
TAGS = []
SMALL = {"batch_size": 16, "dim": 4096}
HELD_OUT = [{"batch_size": 3001, "dim": 100003}]
HELD_OUT_SMALL = [{"batch_size": 7, "dim": 1531}]
