"""Gating: 3x3 convolution, BatchNorm (eval), sigmoid, then multiply the input by the gate."""
import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = 128
width = 128  # ~39 GFLOP conv + passes over 134 MB, ~1.4 ms


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(channels))
            self.bn.running_var.copy_(0.2 + 0.2 * torch.rand(channels))
            self.bn.weight.copy_(1.0 + 0.2 * torch.randn(channels))
            self.bn.bias.copy_(0.2 * torch.randn(channels))

    def forward(self, x):
        return x * torch.sigmoid(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "channels": 12, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 31, "channels": 61, "height": 131, "width": 123}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 5, "height": 9, "width": 11}]
