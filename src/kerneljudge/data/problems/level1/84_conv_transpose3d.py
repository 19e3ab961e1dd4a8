"""Transposed 3D convolution with a 3x4x4 kernel, stride (1, 2, 2), padding 1: spatial 2x upsampling of video features."""
import torch
import torch.nn as nn

batch_size = 4
in_channels = 64
out_channels = 32
depth = 16
height = 64
width = 64  # out 16x128x128; ~52 GFLOP, ~2.5 ms; in 67 MB, out 134 MB


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, (3, 4, 4), stride=(1, 2, 2), padding=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv-transpose", "3d", "strided"]
SMALL = {"batch_size": 1, "in_channels": 8, "out_channels": 4, "depth": 4, "height": 12, "width": 12}
HELD_OUT = [{"batch_size": 3, "in_channels": 61, "out_channels": 35, "depth": 15, "height": 67, "width": 61}]
HELD_OUT_SMALL = [{"batch_size": 2, "in_channels": 5, "out_channels": 3, "depth": 3, "height": 9, "width": 7}]
