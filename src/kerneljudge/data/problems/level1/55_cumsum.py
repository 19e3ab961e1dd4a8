"""Inclusive prefix sum (cumsum) along the last dimension, accumulated in fp32."""
import torch
import torch.nn as nn

batch_size = 8192
length = 40960  # 1.25 GiB in + out: ~2.7 GB moved, ~1.7 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=-1, dtype=torch.float32).to(x.dtype)  # fp32 running sum at any precision


def get_inputs():
    return [torch.randn(batch_size, length)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "scan"
TAGS = []
SMALL = {"batch_size": 16, "length": 4096}
HELD_OUT = [{"batch_size": 8191, "length": 40003}, {"batch_size": 131071, "length": 2047}]
HELD_OUT_SMALL = [{"batch_size": 7, "length": 3001}]
