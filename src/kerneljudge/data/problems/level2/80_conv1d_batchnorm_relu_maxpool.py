"""1D convolution (kernel 7), BatchNorm1d (eval), ReLU, then max pooling by 2 along time."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 64
out_channels = 128
length = 8192  # ~60 GFLOP conv + passes over 268 MB, ~2 ms


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, 7, padding=3, bias=False)
        self.bn = nn.BatchNorm1d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(out_channels))
            self.bn.running_var.copy_(0.2 + 0.3 * torch.rand(out_channels))
            self.bn.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.bn.bias.copy_(0.1 * torch.randn(out_channels))

    def forward(self, x):
        return F.max_pool1d(torch.relu(self.bn(self.conv(x))), 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = []
SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "length": 64}
HELD_OUT = [{"batch_size": 61, "in_channels": 67, "out_channels": 125, "length": 8191}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 5, "out_channels": 7, "length": 37}]
