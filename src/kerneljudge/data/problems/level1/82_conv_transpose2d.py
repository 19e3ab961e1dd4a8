"""Transposed 2D convolution with a square 3x3 kernel, stride 1, padding 1, with bias."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 128
out_channels = 64
height = 128
width = 128  # ~39 GFLOP, ~1.5 ms; in 134 MB, out 67 MB
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv-transpose", "2d"]
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 8, "height": 32, "width": 32}
HELD_OUT = [{"batch_size": 15, "in_channels": 125, "out_channels": 67, "height": 131, "width": 127}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 7, "out_channels": 5, "height": 17, "width": 21}]
