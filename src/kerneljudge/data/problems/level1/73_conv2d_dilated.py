"""2D convolution with a 3x3 kernel, dilation 2 and padding 2 (same-size output, 5x5 receptive field)."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 128
out_channels = 128
height = 128
width = 128  # ~77 GFLOP, ~2.5 ms; in/out 134 MB each
kernel_size = 3
dilation = 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dilation):
        super().__init__()
        pad = dilation * (kernel_size - 1) // 2
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=pad, dilation=dilation)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, dilation]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv2d", "dilated"]
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 32, "width": 32}
HELD_OUT = [{"batch_size": 13, "in_channels": 125, "out_channels": 131, "height": 133, "width": 121}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 7, "out_channels": 5, "height": 19, "width": 25}]
