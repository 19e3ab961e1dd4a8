"""Stride-2 3x3x3 volumetric downsampling convolution, BatchNorm3d (eval), then LeakyReLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 16
out_channels = 64
depth = 32
height = 128
width = 128  # ~58 GFLOP conv + read of a 537 MB input, ~2 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm3d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(out_channels))
            self.bn.running_var.copy_(0.2 + 0.3 * torch.rand(out_channels))
            self.bn.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.bn.bias.copy_(0.1 * torch.randn(out_channels))

    def forward(self, x):
        return F.leaky_relu(self.bn(self.conv(x)), 0.05)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "depth": 8, "height": 12, "width": 12}
HELD_OUT = [{"batch_size": 15, "in_channels": 15, "out_channels": 61, "depth": 31, "height": 125, "width": 129}]
HELD_OUT_SMALL = [{"batch_size": 2, "in_channels": 3, "out_channels": 5, "depth": 7, "height": 9, "width": 11}]
