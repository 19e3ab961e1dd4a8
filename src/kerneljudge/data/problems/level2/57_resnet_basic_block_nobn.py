"""Residual block without normalisation: conv3x3, ReLU, conv3x3, add the input, ReLU."""
import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = 112
width = 112  # 2 convs, ~59 GFLOP + passes over 103 MB, ~2 ms


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        y = self.conv2(torch.relu(self.conv1(x)))
        return torch.relu(x + y)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "channels": 8, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 31, "channels": 61, "height": 113, "width": 109}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 5, "height": 11, "width": 9}]
