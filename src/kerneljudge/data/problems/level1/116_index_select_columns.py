"""index_select along dim 1: pick the same list of int64 column ids (with repeats) from every row."""
import torch
import torch.nn as nn

batch_size = 8192
in_dim = 32768
num_selected = 16384  # x 1.07 GB, out 537 MB; memory-bound, ~0.5 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, index):
        return torch.index_select(x, 1, index)


def get_inputs():
    x = torch.randn(batch_size, in_dim)
    index = torch.randint(0, in_dim, (num_selected,))
    return [x, index]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "indexing"
TAGS = ["index-select", "gather"]
SMALL = {"batch_size": 64, "in_dim": 2048, "num_selected": 512}
HELD_OUT = [{"batch_size": 8191, "in_dim": 32771, "num_selected": 12347}]
HELD_OUT_SMALL = [{"batch_size": 37, "in_dim": 1001, "num_selected": 257}]
