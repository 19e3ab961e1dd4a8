"""Stride-2 4x4 transposed convolution (2x upsampling), add a learned per-channel bias, then GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 128
out_channels = 64
height = 64
width = 64  # ~34 GFLOP, output 32x64x128x128 (134 MB), ~1.2 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1, bias=False)
        self.bias = nn.Parameter(0.3 * torch.randn(out_channels, 1, 1))

    def forward(self, x):
        return F.gelu(self.deconv(x) + self.bias)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 8, "height": 8, "width": 8}
HELD_OUT = [{"batch_size": 31, "in_channels": 125, "out_channels": 67, "height": 63, "width": 61}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 7, "out_channels": 5, "height": 5, "width": 7}]
