"""2D max pooling with a 3x3 window, dilation 3, stride 2 and padding 1 (7x7 receptive field)."""
import torch
import torch.nn as nn

batch_size = 32
channels = 96
height = 384
width = 384  # in 1.8 GB, out 0.45 GB; 9 taps per output, ~0.7 ms
kernel_size = 3
stride = 2
padding = 1
dilation = 3


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation]


# kerneljudge metadata
CATEGORY = "pool"
TAGS = ["maxpool", "2d", "dilated"]
SMALL = {"batch_size": 2, "channels": 8, "height": 48, "width": 48}
HELD_OUT = [{"batch_size": 13, "channels": 97, "height": 381, "width": 401}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 5, "height": 29, "width": 43}]
