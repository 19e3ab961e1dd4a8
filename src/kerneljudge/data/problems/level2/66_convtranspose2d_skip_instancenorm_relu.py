"""U-Net decoder step: stride-2 transposed convolution, add a skip connection, InstanceNorm2d, ReLU."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
out_channels = 64
height = 64
width = 64  # ~34 GFLOP, passes over 134 MB tensors, ~1.2 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)
        self.norm = nn.InstanceNorm2d(out_channels, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.norm.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x, skip):
        return torch.relu(self.norm(self.deconv(x) + skip))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width),
            torch.randn(batch_size, out_channels, 2 * height, 2 * width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 8, "height": 8, "width": 8}
HELD_OUT = [{"batch_size": 29, "in_channels": 127, "out_channels": 63, "height": 61, "width": 67}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 7, "out_channels": 5, "height": 5, "width": 7}]
