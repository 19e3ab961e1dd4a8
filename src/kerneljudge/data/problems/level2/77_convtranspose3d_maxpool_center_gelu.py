"""Stride-2 volumetric transposed convolution, 2x2x2 max pooling, subtract the channel mean, GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 32
out_channels = 32
depth = 16
height = 32
width = 32  # ~34 GFLOP, 268 MB intermediate, ~1.8 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, 4, stride=2, padding=1)

    def forward(self, x):
        y = F.max_pool3d(self.deconv(x), 2)
        return F.gelu(2.0 * (y - y.mean(dim=1, keepdim=True)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 6, "depth": 3, "height": 5, "width": 5}
HELD_OUT = [{"batch_size": 15, "in_channels": 31, "out_channels": 33, "depth": 15, "height": 33, "width": 31}]
HELD_OUT_SMALL = [{"batch_size": 2, "in_channels": 5, "out_channels": 3, "depth": 3, "height": 4, "width": 5}]
