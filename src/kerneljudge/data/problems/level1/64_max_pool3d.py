"""3D max pooling with a 3x3x3 window, stride 2 and padding 1 over video/volume data."""
import torch
import torch.nn as nn

batch_size = 8
channels = 32
depth = 128
height = 128
width = 128  # in 2.1 GB, out 0.27 GB; 27 taps per output, ~1 ms
kernel_size = 3
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]


# kerneljudge metadata
CATEGORY = "pool"
TAGS = ["maxpool", "3d"]
SMALL = {"batch_size": 2, "channels": 4, "depth": 16, "height": 24, "width": 24}
HELD_OUT = [{"batch_size": 7, "channels": 33, "depth": 121, "height": 127, "width": 131}]
HELD_OUT_SMALL = [{"batch_size": 1, "channels": 3, "depth": 11, "height": 17, "width": 13}]
