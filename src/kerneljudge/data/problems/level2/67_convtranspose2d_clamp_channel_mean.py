"""Stride-2 transposed convolution, clamp, mean over channels, then multiply by a constant."""
import torch
import torch.nn as nn

batch_size = 64
in_channels = 64
out_channels = 64
height = 64
width = 64  # ~34 GFLOP, 268 MB intermediate, ~1.2 ms
clamp_value = 0.4
scale = 10.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, clamp_value, scale):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)
        self.clamp_value = clamp_value
        self.scale = scale

    def forward(self, x):
        y = torch.clamp(self.deconv(x), -self.clamp_value, self.clamp_value)
        return y.mean(dim=1) * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, clamp_value, scale]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 8, "height": 8, "width": 8}
HELD_OUT = [{"batch_size": 59, "in_channels": 61, "out_channels": 67, "height": 65, "width": 63}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 7, "out_channels": 5, "height": 5, "width": 7}]
