"""DCGAN-style generator stage: stride-2 transposed convolution, BatchNorm (eval), then tanh."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 32
height = 128
width = 128  # ~34 GFLOP, output 32x32x256x256 (268 MB), ~1.5 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(out_channels))
            self.bn.running_var.copy_(0.1 + 0.2 * torch.rand(out_channels))
            self.bn.weight.copy_(0.8 + 0.2 * torch.randn(out_channels))
            self.bn.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x):
        return torch.tanh(self.bn(self.deconv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 8, "height": 8, "width": 8}
HELD_OUT = [{"batch_size": 29, "in_channels": 63, "out_channels": 33, "height": 125, "width": 129}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 7, "out_channels": 5, "height": 7, "width": 5}]
