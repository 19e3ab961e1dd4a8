"""1D convolution with kernel 5, stride 2, dilation 3 and padding 6 (halves the length), with bias."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
out_channels = 256
length = 32768  # out length 16384; ~172 GFLOP, ~5 ms; in/out 537 MB each
kernel_size = 5
stride = 2
dilation = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, dilation):
        super().__init__()
        pad = dilation * (kernel_size - 1) // 2
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, padding=pad, dilation=dilation)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, dilation]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv1d", "strided", "dilated"]
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 32, "length": 1024}
HELD_OUT = [{"batch_size": 29, "in_channels": 127, "out_channels": 253, "length": 32771}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 7, "out_channels": 13, "length": 401}]
