"""Pointwise (1x1) 2D convolution expanding 256 -> 512 channels, with bias."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 512
height = 128
width = 128  # ~137 GFLOP, ~3.5 ms; in 537 MB, out 1.1 GB


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv2d", "pointwise"]
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 32, "height": 32, "width": 32}
HELD_OUT = [{"batch_size": 31, "in_channels": 253, "out_channels": 509, "height": 127, "width": 125}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 13, "out_channels": 19, "height": 15, "width": 21}]
