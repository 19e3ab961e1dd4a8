"""3x3 convolution without bias, BatchNorm2d in eval mode with non-trivial running statistics, ReLU."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
out_channels = 128
height = 96
width = 96  # ~87 GFLOP conv + passes over 151 MB, ~2.3 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(out_channels))
            self.bn.running_var.copy_(0.2 + 0.3 * torch.rand(out_channels))
            self.bn.weight.copy_(1.0 + 0.25 * torch.randn(out_channels))
            self.bn.bias.copy_(0.1 * torch.randn(out_channels))

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 31, "in_channels": 125, "out_channels": 130, "height": 97, "width": 89}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 7, "out_channels": 9, "height": 11, "width": 13}]
