"""2D average pooling with a 5x5 window, stride 1 and zero padding 2 (box blur)."""
import torch
import torch.nn as nn

batch_size = 16
channels = 64
height = 512
width = 512  # in 1.1 GB, out 1.1 GB; 25 taps per output, ~0.8 ms
kernel_size = 5
stride = 1
padding = 2


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]


# kerneljudge metadata
CATEGORY = "pool"
TAGS = ["avgpool", "2d"]
SMALL = {"batch_size": 2, "channels": 8, "height": 48, "width": 48}
HELD_OUT = [{"batch_size": 15, "channels": 61, "height": 509, "width": 517}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 5, "height": 33, "width": 27}]
