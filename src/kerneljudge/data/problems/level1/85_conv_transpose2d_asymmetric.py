"""Transposed 2D convolution with a 3x5 kernel, stride (2, 1), padding (1, 2), output_padding (1, 0): upsamples height only."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 128
out_channels = 128
height = 64
width = 128  # out 128x128; ~64 GFLOP, ~2 ms; in 67 MB, out 134 MB


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.ConvTranspose2d(
            in_channels, out_channels, (3, 5), stride=(2, 1), padding=(1, 2), output_padding=(1, 0)
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv-transpose", "2d", "rectangular", "strided"]
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 8, "height": 16, "width": 24}
HELD_OUT = [{"batch_size": 15, "in_channels": 131, "out_channels": 125, "height": 63, "width": 129}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 7, "out_channels": 5, "height": 9, "width": 13}]
