"""Grouped 2D convolution (8 groups, ResNeXt-style) with a 3x3 kernel, padding 1, with bias."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 512
out_channels = 512
height = 64
width = 64  # ~77 GFLOP, ~2.5 ms; in/out 268 MB each
kernel_size = 3
groups = 8


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, groups=groups)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv2d", "grouped"]
SMALL = {"batch_size": 2, "in_channels": 32, "out_channels": 32, "height": 24, "width": 24, "groups": 4}
HELD_OUT = [{"batch_size": 29, "in_channels": 504, "out_channels": 520, "height": 61, "width": 67, "groups": 8}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 12, "out_channels": 20, "height": 13, "width": 17, "groups": 4}]
