"""MobileNet-style separable block: depthwise 3x3 conv, BatchNorm, ReLU6, pointwise 1x1 conv, BatchNorm."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
out_channels = 256
height = 112
width = 112  # ~27 GFLOP, passes over 205-411 MB tensors, ~2 ms


def _randomise_bn(bn):
    c = bn.num_features
    with torch.no_grad():
        bn.running_mean.copy_(0.1 * torch.randn(c))
        bn.running_var.copy_(0.05 + 0.1 * torch.rand(c))
        bn.weight.copy_(1.0 + 0.25 * torch.randn(c))
        bn.bias.copy_(0.1 * torch.randn(c))


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.dw = nn.Conv2d(in_channels, in_channels, 3, padding=1, groups=in_channels, bias=False)
        self.bn1 = nn.BatchNorm2d(in_channels)
        self.pw = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        _randomise_bn(self.bn1)
        _randomise_bn(self.bn2)

    def forward(self, x):
        y = torch.clamp(self.bn1(self.dw(x)), 0.0, 6.0)
        return self.bn2(self.pw(y))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 31, "in_channels": 129, "out_channels": 255, "height": 111, "width": 113}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 5, "out_channels": 9, "height": 13, "width": 10}]
