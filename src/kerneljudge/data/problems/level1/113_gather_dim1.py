"""torch.gather along dim 1: out[b, j] = x[b, index[b, j]] with random int64 indices (repeats allowed)."""
import torch
import torch.nn as nn

batch_size = 8192
in_dim = 16384
out_dim = 16384  # x 537 MB, index 1.07 GB, out 537 MB; memory-bound, ~0.6 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, index):
        return torch.gather(x, 1, index)


def get_inputs():
    x = torch.randn(batch_size, in_dim)
    index = torch.randint(0, in_dim, (batch_size, out_dim))
    return [x, index]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "indexing"
TAGS = ["gather"]
SMALL = {"batch_size": 64, "in_dim": 1024, "out_dim": 512}
HELD_OUT = [{"batch_size": 8191, "in_dim": 16381, "out_dim": 12289}]
HELD_OUT_SMALL = [{"batch_size": 37, "in_dim": 1001, "out_dim": 333}]
