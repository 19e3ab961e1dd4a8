"""Channel-preserving 3x3x3 volumetric convolution, tanh, learned per-channel scale, residual add."""
import torch
import torch.nn as nn

batch_size = 16
channels = 16
depth = 32
height = 64
width = 64  # ~29 GFLOP conv + passes over 134 MB, ~1.2 ms


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv3d(channels, channels, 3, padding=1)
        self.scale = nn.Parameter(0.5 + 0.2 * torch.randn(channels, 1, 1, 1))

    def forward(self, x):
        return x + self.scale * torch.tanh(2.0 * self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "channels": 6, "depth": 6, "height": 8, "width": 8}
HELD_OUT = [{"batch_size": 15, "channels": 17, "depth": 29, "height": 65, "width": 63}]
HELD_OUT_SMALL = [{"batch_size": 2, "channels": 5, "depth": 5, "height": 7, "width": 9}]
