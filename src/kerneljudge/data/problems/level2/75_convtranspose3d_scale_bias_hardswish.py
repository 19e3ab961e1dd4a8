"""Stride-2 volumetric transposed convolution, constant scale, learned per-channel bias, HardSwish."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 32
out_channels = 32
depth = 16
height = 32
width = 32  # ~34 GFLOP, passes over a 268 MB output, ~1.5 ms
scale = 4.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, scale):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, 4, stride=2, padding=1, bias=False)
        self.scale = scale
        self.bias = nn.Parameter(0.5 * torch.randn(out_channels, 1, 1, 1))

    def forward(self, x):
        return F.hardswish(self.deconv(x) * self.scale + self.bias)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, scale]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 4, "depth": 3, "height": 5, "width": 5}
HELD_OUT = [{"batch_size": 15, "in_channels": 31, "out_channels": 33, "depth": 17, "height": 31, "width": 33}]
HELD_OUT_SMALL = [{"batch_size": 2, "in_channels": 5, "out_channels": 3, "depth": 3, "height": 4, "width": 5}]
