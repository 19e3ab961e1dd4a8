"""3x3x3 volumetric convolution, ReLU, then 2x2x2 max pooling."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 16
out_channels = 32
depth = 32
height = 64
width = 64  # ~58 GFLOP conv + passes over 268 MB, ~2 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        return F.max_pool3d(torch.relu(self.conv(x)), 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "depth": 6, "height": 8, "width": 8}
HELD_OUT = [{"batch_size": 15, "in_channels": 13, "out_channels": 31, "depth": 31, "height": 65, "width": 61}]
HELD_OUT_SMALL = [{"batch_size": 2, "in_channels": 3, "out_channels": 5, "depth": 5, "height": 7, "width": 9}]
