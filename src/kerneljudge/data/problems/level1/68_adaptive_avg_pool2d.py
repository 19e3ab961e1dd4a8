"""Adaptive 2D average pooling to a 7x7 grid from a size that is not a multiple of 7 (overlapping windows)."""
import torch
import torch.nn as nn

batch_size = 256
channels = 512
height = 60
width = 60  # in 1.9 GB, out 25 MB; memory-bound, ~0.6 ms
out_size = 7


class Model(nn.Module):
    def __init__(self, out_size):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(out_size)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [out_size]


# kerneljudge metadata
CATEGORY = "pool"
TAGS = ["avgpool", "adaptive", "2d"]
SMALL = {"batch_size": 4, "channels": 32, "height": 30, "width": 30}
HELD_OUT = [{"batch_size": 253, "channels": 509, "height": 61, "width": 45}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 13, "height": 23, "width": 17}]
