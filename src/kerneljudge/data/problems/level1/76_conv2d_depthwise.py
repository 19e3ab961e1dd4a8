"""Depthwise 2D convolution (groups = channels) with a 3x3 kernel, padding 1, with bias."""
import torch
import torch.nn as nn

batch_size = 32
channels = 384
height = 128
width = 128  # ~4 GFLOP, memory-bound: in/out 805 MB each, ~1 ms
kernel_size = 3


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2, groups=channels)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv2d", "depthwise"]
SMALL = {"batch_size": 2, "channels": 16, "height": 48, "width": 48}
HELD_OUT = [{"batch_size": 29, "channels": 381, "height": 131, "width": 125}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 7, "height": 23, "width": 17}]
