"""3D convolution with a 3x3x3 kernel, stride 1, padding 1, with bias (video/volume features)."""
import torch
import torch.nn as nn

batch_size = 8
in_channels = 32
out_channels = 64
depth = 32
height = 64
width = 64  # ~116 GFLOP, ~4 ms; in 134 MB, out 268 MB
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv3d"]
SMALL = {"batch_size": 1, "in_channels": 4, "out_channels": 8, "depth": 8, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 7, "in_channels": 29, "out_channels": 67, "depth": 31, "height": 63, "width": 65}]
HELD_OUT_SMALL = [{"batch_size": 2, "in_channels": 3, "out_channels": 5, "depth": 7, "height": 11, "width": 9}]
