"""3D convolution with an asymmetric 3x5x5 kernel, stride (1, 2, 2) and padding (1, 2, 2)."""
import torch
import torch.nn as nn

batch_size = 8
in_channels = 16
out_channels = 64
depth = 32
height = 128
width = 128  # out 32x64x64; ~161 GFLOP, ~5 ms; in 268 MB, out 268 MB


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, (3, 5, 5), stride=(1, 2, 2), padding=(1, 2, 2))

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv3d", "strided", "rectangular"]
SMALL = {"batch_size": 1, "in_channels": 4, "out_channels": 8, "depth": 8, "height": 24, "width": 24}
HELD_OUT = [{"batch_size": 7, "in_channels": 15, "out_channels": 61, "depth": 33, "height": 125, "width": 131}]
HELD_OUT_SMALL = [{"batch_size": 2, "in_channels": 3, "out_channels": 5, "depth": 5, "height": 17, "width": 13}]
