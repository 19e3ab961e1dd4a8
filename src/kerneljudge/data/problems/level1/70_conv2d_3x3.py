"""2D convolution with a square 3x3 kernel, stride 1, padding 1, with bias."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
out_channels = 128
height = 128
width = 128  # ~155 GFLOP, ~4 ms; in/out 268 MB each
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv2d", "square"]
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 32, "width": 32}
HELD_OUT = [{"batch_size": 31, "in_channels": 127, "out_channels": 131, "height": 127, "width": 129}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 5, "out_channels": 7, "height": 19, "width": 23}]
