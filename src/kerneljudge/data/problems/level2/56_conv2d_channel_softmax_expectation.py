"""3x3 convolution, softmax over channels, then the expectation of a learned per-channel value."""
import torch
import torch.nn as nn

batch_size = 64
in_channels = 64
out_channels = 32
height = 128
width = 128  # ~39 GFLOP conv + passes over 134 MB, ~1.3 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.values = nn.Parameter(torch.randn(out_channels))

    def forward(self, x):
        p = torch.softmax(2.0 * self.conv(x), dim=1)
        return (p * self.values[None, :, None, None]).sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 61, "in_channels": 65, "out_channels": 27, "height": 127, "width": 131}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 5, "out_channels": 7, "height": 9, "width": 13}]
