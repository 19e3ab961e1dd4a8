"""Dilated (rate 2) 3x3 convolution, GroupNorm, then ReLU."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
num_groups = 16
height = 128
width = 128  # ~39 GFLOP conv + passes over 134 MB, ~1.4 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=2, dilation=2)
        self.norm = nn.GroupNorm(num_groups, out_channels)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.norm.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, num_groups]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "num_groups": 4, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 15, "in_channels": 63, "out_channels": 120, "num_groups": 12, "height": 129, "width": 125}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 5, "out_channels": 9, "num_groups": 3, "height": 11, "width": 13}]
