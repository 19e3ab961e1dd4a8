"""End of a ResNet block: 3x3 convolution, BatchNorm (eval), add the identity shortcut, ReLU."""
import torch
import torch.nn as nn

batch_size = 32
channels = 128
height = 64
width = 64  # ~39 GFLOP conv + passes over 67 MB, ~1.2 ms


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(channels))
            self.bn.running_var.copy_(0.2 + 0.3 * torch.rand(channels))
            self.bn.weight.copy_(0.5 + 0.2 * torch.randn(channels))
            self.bn.bias.copy_(0.1 * torch.randn(channels))

    def forward(self, x, identity):
        return torch.relu(self.bn(self.conv(x)) + identity)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width), torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "channels": 12, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 31, "channels": 125, "height": 61, "width": 67}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 7, "height": 9, "width": 11}]
