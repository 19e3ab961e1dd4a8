"""Reverse (suffix) cumulative sum along the last dimension: y[i] = sum_{j >= i} x[j], accumulated in fp32."""
import torch
import torch.nn as nn

batch_size = 8192
length = 32768  # 1 GiB; eager flip + cumsum + flip: ~6.4 GB moved, ~2.6 ms, peak 3 GiB


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x.flip(-1), dim=-1, dtype=torch.float32).flip(-1).to(x.dtype)  # fp32 running sum


def get_inputs():
    return [torch.randn(batch_size, length)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "scan"
TAGS = []
SMALL = {"batch_size": 16, "length": 4096}
HELD_OUT = [{"batch_size": 8191, "length": 30011}]
HELD_OUT_SMALL = [{"batch_size": 7, "length": 3001}]
