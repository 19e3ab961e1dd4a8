"""Stride-2 transposed convolution, GroupNorm, then SiLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 128
out_channels = 64
num_groups = 8
height = 64
width = 64  # ~34 GFLOP, output 32x64x128x128 (134 MB), ~1.2 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, num_groups):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)
        self.norm = nn.GroupNorm(num_groups, out_channels)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.norm.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x):
        return F.silu(self.norm(self.deconv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, num_groups]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 8, "num_groups": 4, "height": 8, "width": 8}
HELD_OUT = [{"batch_size": 29, "in_channels": 127, "out_channels": 66, "num_groups": 6, "height": 63, "width": 65}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 7, "out_channels": 6, "num_groups": 3, "height": 5, "width": 7}]
