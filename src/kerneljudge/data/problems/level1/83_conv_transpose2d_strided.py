"""Transposed 2D convolution with a 4x4 kernel, stride 2, padding 1: learned 2x upsampling (decoder/GAN style)."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 256
out_channels = 128
height = 64
width = 64  # out 128x128; ~69 GFLOP, ~2 ms; in 67 MB, out 134 MB
kernel_size = 4
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv-transpose", "2d", "strided"]
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 8, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 13, "in_channels": 253, "out_channels": 131, "height": 61, "width": 67}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 7, "out_channels": 5, "height": 11, "width": 9}]
