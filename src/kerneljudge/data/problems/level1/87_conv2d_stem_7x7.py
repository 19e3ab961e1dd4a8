"""Image-stem 2D convolution: 3 -> 64 channels, 7x7 kernel, stride 2, padding 3, no bias (ResNet-style)."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 3
out_channels = 64
height = 512
width = 512  # out 256x256; ~39 GFLOP, ~2 ms; in 101 MB, out 537 MB


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 7, stride=2, padding=3, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv2d", "strided", "stem"]
SMALL = {"batch_size": 2, "in_channels": 3, "out_channels": 16, "height": 64, "width": 64}
HELD_OUT = [{"batch_size": 29, "in_channels": 3, "out_channels": 64, "height": 509, "width": 477}]
HELD_OUT_SMALL = [{"batch_size": 1, "in_channels": 3, "out_channels": 7, "height": 37, "width": 29}]
