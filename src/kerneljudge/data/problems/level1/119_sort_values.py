"""Sort each row ascending and return the sorted values."""
import torch
import torch.nn as nn

batch_size = 4096
row_len = 16384  # in/out 268 MB each; ~1.5 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sort(x, dim=-1).values


def get_inputs():
    return [torch.randn(batch_size, row_len)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "indexing"
TAGS = ["sort"]
SMALL = {"batch_size": 32, "row_len": 2048}
HELD_OUT = [{"batch_size": 4093, "row_len": 16387}]
HELD_OUT_SMALL = [{"batch_size": 7, "row_len": 1001}]
