"""2D convolution with a 5x5 kernel, stride 2 and padding 2 (downsampling), with bias."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 128
height = 256
width = 256  # out 128x128; ~214 GFLOP, ~5 ms; in 537 MB, out 268 MB
kernel_size = 5
stride = 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv2d", "strided"]
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 48, "width": 48}
HELD_OUT = [{"batch_size": 29, "in_channels": 67, "out_channels": 125, "height": 255, "width": 261}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 5, "out_channels": 7, "height": 27, "width": 31}]
