"""Causal ("PixelCNN-style") 2D convolution: 3x3 kernel after asymmetric zero padding (2 top, 2 left, none bottom/right)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 128
out_channels = 128
height = 128
width = 128  # ~77 GFLOP, ~2.5 ms; in/out 134 MB each
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.pad = kernel_size - 1
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        # F.pad order: (left, right, top, bottom)
        x = F.pad(x, (self.pad, 0, self.pad, 0))
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv2d", "asymmetric-padding"]
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 32, "width": 32}
HELD_OUT = [{"batch_size": 15, "in_channels": 127, "out_channels": 129, "height": 125, "width": 133}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 5, "out_channels": 9, "height": 17, "width": 22}]
