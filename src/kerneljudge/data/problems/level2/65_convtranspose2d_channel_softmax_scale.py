"""Stride-2 2x2 transposed convolution, softmax over channels, then a learned per-channel scale."""
import torch
import torch.nn as nn

batch_size = 128
in_channels = 128
out_channels = 32
height = 64
width = 64  # ~17 GFLOP, passes over a 537 MB output, ~1.5 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 2, stride=2)
        self.scale = nn.Parameter(1.0 + 0.5 * torch.randn(out_channels, 1, 1))

    def forward(self, x):
        return torch.softmax(2.0 * self.deconv(x), dim=1) * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 8, "height": 8, "width": 8}
HELD_OUT = [{"batch_size": 121, "in_channels": 125, "out_channels": 29, "height": 65, "width": 63}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 7, "out_channels": 5, "height": 5, "width": 7}]
