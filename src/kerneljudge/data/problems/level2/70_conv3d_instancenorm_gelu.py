"""3x3x3 volumetric convolution, InstanceNorm3d with affine parameters, then GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 16
out_channels = 32
depth = 32
height = 64
width = 64  # ~29 GFLOP conv + passes over 134 MB, ~1.2 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)
        self.norm = nn.InstanceNorm3d(out_channels, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.norm.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x):
        return F.gelu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "depth": 6, "height": 8, "width": 8}
HELD_OUT = [{"batch_size": 7, "in_channels": 15, "out_channels": 33, "depth": 29, "height": 65, "width": 63}]
HELD_OUT_SMALL = [{"batch_size": 2, "in_channels": 3, "out_channels": 5, "depth": 5, "height": 6, "width": 7}]
