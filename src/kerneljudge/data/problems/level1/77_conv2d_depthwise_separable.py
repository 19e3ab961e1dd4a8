"""Depthwise-separable 2D convolution: depthwise 3x3 (padding 1) followed by pointwise 1x1, both with bias."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
out_channels = 256
height = 128
width = 128  # dw ~2 GFLOP + pw ~34 GFLOP, ~1.5 ms; in 268 MB, mid 268 MB, out 537 MB
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, padding=kernel_size // 2, groups=in_channels)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        return self.pointwise(self.depthwise(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv2d", "depthwise", "separable"]
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 32, "height": 32, "width": 32}
HELD_OUT = [{"batch_size": 31, "in_channels": 129, "out_channels": 251, "height": 127, "width": 131}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 7, "out_channels": 11, "height": 19, "width": 15}]
