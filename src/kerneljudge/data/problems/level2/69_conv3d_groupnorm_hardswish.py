"""3x3x3 volumetric convolution, GroupNorm, then HardSwish."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 32
out_channels = 64
num_groups = 8
depth = 16
height = 64
width = 64  # ~58 GFLOP conv + passes over 134 MB, ~1.6 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, num_groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)
        self.norm = nn.GroupNorm(num_groups, out_channels)
        with torch.no_grad():
            self.norm.weight.copy_(1.5 + 0.3 * torch.randn(out_channels))
            self.norm.bias.copy_(0.3 * torch.randn(out_channels))

    def forward(self, x):
        return F.hardswish(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, num_groups]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "num_groups": 4, "depth": 6, "height": 8, "width": 8}
HELD_OUT = [{"batch_size": 7, "in_channels": 29, "out_channels": 66, "num_groups": 6, "depth": 15, "height": 63, "width": 65}]
HELD_OUT_SMALL = [{"batch_size": 2, "in_channels": 3, "out_channels": 6, "num_groups": 3, "depth": 5, "height": 7, "width": 6}]
