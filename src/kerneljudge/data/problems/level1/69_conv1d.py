"""1D convolution (kernel 7, stride 1, 'same' padding) with bias over long sequences."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 256
length = 8192  # ~241 GFLOP, ~6 ms; in/out 268 MB each
kernel_size = 7


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv1d"]
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 24, "length": 512}
HELD_OUT = [{"batch_size": 29, "in_channels": 251, "out_channels": 259, "length": 8191}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 13, "out_channels": 11, "length": 301}]
