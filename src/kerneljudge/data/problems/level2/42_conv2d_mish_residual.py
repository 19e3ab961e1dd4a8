"""Channel-preserving 3x3 convolution, Mish, then a residual add of the input."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 96
height = 96
width = 96  # ~49 GFLOP conv + passes over 113 MB, ~1.5 ms


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return x + F.mish(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "channels": 12, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 29, "channels": 93, "height": 101, "width": 95}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 7, "height": 9, "width": 12}]
