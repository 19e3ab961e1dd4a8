"""Sum reduction over the middle dimension of a 3D tensor (keepdim=True)."""
import torch
import torch.nn as nn

batch_size = 160
dim = 4096
inner = 1024  # 2.5 GiB read once, tiny output: ~2.7 GB moved, ~0.83 ms


class Model(nn.Module):
    def __init__(self, reduce_dim):
        super().__init__()
        self.reduce_dim = reduce_dim

    def forward(self, x):
        return torch.sum(x, dim=self.reduce_dim, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim, inner)]


def get_init_inputs():
    return [1]


# kerneljudge metadata
CATEGORY = "reduction"
TAGS = []
SMALL = {"batch_size": 4, "dim": 256, "inner": 64}
HELD_OUT = [{"batch_size": 131, "dim": 4099, "inner": 1001}]
HELD_OUT_SMALL = [{"batch_size": 3, "dim": 301, "inner": 37}]
