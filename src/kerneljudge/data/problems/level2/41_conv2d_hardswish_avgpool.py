"""3x3 convolution, HardSwish, then 2x2 average pooling."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 64
out_channels = 128
height = 112
width = 112  # ~59 GFLOP conv + passes over 205 MB, ~2 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        return F.avg_pool2d(F.hardswish(2.0 * self.conv(x)), 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 27, "in_channels": 67, "out_channels": 125, "height": 111, "width": 115}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 5, "out_channels": 7, "height": 13, "width": 9}]
