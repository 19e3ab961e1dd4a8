"""2D convolution with a rectangular 3x7 kernel and matching padding (1, 3) on a rectangular image."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = 256
width = 128  # ~176 GFLOP, ~5 ms; in 134 MB, out 268 MB
kernel_h = 3
kernel_w = 7


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_h, kernel_w):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, (kernel_h, kernel_w), padding=(kernel_h // 2, kernel_w // 2))

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_h, kernel_w]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv2d", "rectangular"]
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 32, "width": 24}
HELD_OUT = [{"batch_size": 15, "in_channels": 61, "out_channels": 127, "height": 251, "width": 131}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 5, "out_channels": 9, "height": 21, "width": 13}]
