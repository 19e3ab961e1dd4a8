"""Sub-pixel upsampling: 3x3 convolution to r*r times the channels, pixel shuffle, then LeakyReLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 64
out_channels = 64
upscale = 2
height = 96
width = 96  # ~43 GFLOP conv + passes over 151 MB, ~1.5 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, upscale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels * upscale * upscale, 3, padding=1)
        self.upscale = upscale

    def forward(self, x):
        return F.leaky_relu(F.pixel_shuffle(self.conv(x), self.upscale), 0.1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, upscale]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 4, "height": 12, "width": 12}
HELD_OUT = [{"batch_size": 15, "in_channels": 61, "out_channels": 29, "upscale": 3, "height": 83, "width": 79}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 5, "out_channels": 3, "upscale": 3, "height": 7, "width": 9}]
