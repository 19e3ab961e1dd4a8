"""GroupNorm: normalise each group of channels of an (N, C, H, W) tensor, then apply a per-channel affine."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 128
num_groups = 16
height = 256
width = 256  # 1 GiB in + out; stats pass + normalise pass: ~3.2 GB moved, ~1.6 ms


class Model(nn.Module):
    def __init__(self, num_groups, channels):
        super().__init__()
        self.num_groups = num_groups
        self.eps = 1e-5
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(channels))
        self.bias = nn.Parameter(0.5 * torch.randn(channels))

    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)


def get_inputs():
    # per-(sample, channel) scale and offset, so groups mix channels with different statistics
    scale = 0.5 + 2.0 * torch.rand(batch_size, channels, 1, 1)
    shift = torch.randn(batch_size, channels, 1, 1)
    return [torch.randn(batch_size, channels, height, width).mul_(scale).add_(shift)]


def get_init_inputs():
    return [num_groups, channels]


# kerneljudge metadata
CATEGORY = "norm"
TAGS = []
SMALL = {"batch_size": 2, "channels": 16, "num_groups": 4, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 29, "channels": 120, "num_groups": 8, "height": 251, "width": 257}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 12, "num_groups": 3, "height": 7, "width": 11}]
