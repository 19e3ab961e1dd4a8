"""3x3 convolution followed by squeeze-and-excitation: global pool, FC, ReLU, FC, sigmoid, channel rescale."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 128
reduction = 4
height = 96
width = 96  # ~43 GFLOP conv + passes over 151 MB, ~1.4 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, reduction):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.fc1 = nn.Linear(out_channels, out_channels // reduction)
        self.fc2 = nn.Linear(out_channels // reduction, out_channels)

    def forward(self, x):
        y = self.conv(x)
        s = y.mean(dim=(2, 3))
        s = torch.sigmoid(self.fc2(torch.relu(self.fc1(s))))
        return y * s[:, :, None, None]


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, reduction]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 27, "in_channels": 63, "out_channels": 132, "height": 95, "width": 97}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 5, "out_channels": 12, "height": 9, "width": 11}]
