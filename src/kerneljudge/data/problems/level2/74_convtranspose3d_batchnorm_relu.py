"""Stride-2 4x4x4 volumetric transposed convolution, BatchNorm3d (eval), then ReLU."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 32
depth = 16
height = 32
width = 32  # ~69 GFLOP, output 16x32x32x64x64 (268 MB), ~3 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, 4, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm3d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(out_channels))
            self.bn.running_var.copy_(0.2 + 0.3 * torch.rand(out_channels))
            self.bn.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.bn.bias.copy_(0.2 + 0.1 * torch.randn(out_channels))

    def forward(self, x):
        return torch.relu(self.bn(self.deconv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 4, "depth": 3, "height": 5, "width": 5}
HELD_OUT = [{"batch_size": 15, "in_channels": 61, "out_channels": 33, "depth": 15, "height": 31, "width": 33}]
HELD_OUT_SMALL = [{"batch_size": 2, "in_channels": 5, "out_channels": 3, "depth": 3, "height": 4, "width": 5}]
