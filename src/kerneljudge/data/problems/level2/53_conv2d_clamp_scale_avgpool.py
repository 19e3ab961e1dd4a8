"""3x3 convolution, clamp to a symmetric range, multiply by a constant, then 2x2 average pooling."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 64
out_channels = 128
height = 128
width = 128  # ~77 GFLOP conv + passes over 268 MB, ~2.5 ms
clamp_value = 0.5
scale = 2.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, clamp_value, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.clamp_value = clamp_value
        self.scale = scale

    def forward(self, x):
        y = torch.clamp(self.conv(x), -self.clamp_value, self.clamp_value) * self.scale
        return F.avg_pool2d(y, 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, clamp_value, scale]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 31, "in_channels": 65, "out_channels": 127, "height": 129, "width": 123}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 5, "out_channels": 7, "height": 13, "width": 11}]
