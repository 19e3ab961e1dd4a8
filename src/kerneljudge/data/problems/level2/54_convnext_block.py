"""ConvNeXt block: depthwise 7x7 conv, channels-last LayerNorm, pointwise MLP with GELU, layer scale, residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
channels = 128
height = 56
width = 56  # ~54 GFLOP (two 1x1 GEMMs + depthwise), 411 MB hidden, ~2 ms


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.dwconv = nn.Conv2d(channels, channels, 7, padding=3, groups=channels)
        self.norm = nn.LayerNorm(channels, eps=1e-6)
        self.fc1 = nn.Linear(channels, 4 * channels)
        self.fc2 = nn.Linear(4 * channels, channels)
        self.gamma = nn.Parameter(0.5 * torch.rand(channels) + 0.25)

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.fc2(F.gelu(self.fc1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "channels": 16, "height": 14, "width": 14}
HELD_OUT = [{"batch_size": 61, "channels": 132, "height": 57, "width": 55}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 12, "height": 9, "width": 11}]
