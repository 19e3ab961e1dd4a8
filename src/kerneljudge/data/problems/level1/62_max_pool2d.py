"""2D max pooling with a 3x3 window, stride 2 and padding 1 (ResNet-style downsampling)."""
import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = 512
width = 512  # in 2.1 GB, out 0.5 GB; memory-bound, ~0.8 ms
kernel_size = 3
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]


# kerneljudge metadata
CATEGORY = "pool"
TAGS = ["maxpool", "2d"]
SMALL = {"batch_size": 2, "channels": 8, "height": 64, "width": 64}
HELD_OUT = [{"batch_size": 29, "channels": 67, "height": 509, "width": 383}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 5, "height": 37, "width": 51}]
