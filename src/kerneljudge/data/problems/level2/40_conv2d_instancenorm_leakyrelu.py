"""5x5 convolution, InstanceNorm2d with affine parameters, then LeakyReLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 32
out_channels = 64
height = 128
width = 128  # ~27 GFLOP conv + passes over 67 MB, ~1 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 5, padding=2)
        self.norm = nn.InstanceNorm2d(out_channels, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.norm.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x):
        return F.leaky_relu(self.norm(self.conv(x)), 0.2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 13, "in_channels": 31, "out_channels": 67, "height": 127, "width": 121}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 3, "out_channels": 5, "height": 11, "width": 9}]
