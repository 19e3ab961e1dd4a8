"""L2 normalisation of each row: y = x / max(||x||_2, eps) along dim 1."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 81920
dim = 4096  # 1.25 GiB in + out; norm pass + divide pass: ~4 GB moved, ~1.5 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.normalize(x, p=2.0, dim=1)


def get_inputs():
    # rows with different norms
    return [torch.randn(batch_size, dim).mul_(0.25 + 3.0 * torch.rand(batch_size, 1))]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "norm"
TAGS = []
SMALL = {"batch_size": 64, "dim": 1024}
HELD_OUT = [{"batch_size": 70001, "dim": 4099}, {"batch_size": 3001, "dim": 65537}]
HELD_OUT_SMALL = [{"batch_size": 7, "dim": 1001}]
