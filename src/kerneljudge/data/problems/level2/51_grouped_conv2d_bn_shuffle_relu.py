"""ShuffleNet-style unit: grouped 3x3 convolution, BatchNorm (eval), channel shuffle, then ReLU."""
import torch
import torch.nn as nn

batch_size = 32
channels = 256
groups = 4
height = 64
width = 64  # ~39 GFLOP conv + passes over 134 MB, ~1.5 ms


class Model(nn.Module):
    def __init__(self, channels, groups):
        super().__init__()
        self.groups = groups
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(channels))
            self.bn.running_var.copy_(0.2 + 0.3 * torch.rand(channels))
            self.bn.weight.copy_(1.0 + 0.2 * torch.randn(channels))
            self.bn.bias.copy_(0.2 * torch.randn(channels))

    def forward(self, x):
        y = self.bn(self.conv(x))
        n, c, h, w = y.shape
        y = y.view(n, self.groups, c // self.groups, h, w).transpose(1, 2).reshape(n, c, h, w)
        return torch.relu(y)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, groups]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "channels": 16, "groups": 4, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 31, "channels": 258, "groups": 3, "height": 63, "width": 67}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 12, "groups": 3, "height": 9, "width": 11}]
