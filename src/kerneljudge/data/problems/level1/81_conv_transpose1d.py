"""Transposed 1D convolution (kernel 4, stride 2, padding 1): 2x upsampling of sequences, with bias."""
import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 128
length = 8192  # out length 16384; ~137 GFLOP, ~4 ms; in/out 268 MB each
kernel_size = 4
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["conv-transpose", "1d"]
SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 8, "length": 512}
HELD_OUT = [{"batch_size": 31, "in_channels": 255, "out_channels": 129, "length": 8185}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 11, "out_channels": 7, "length": 299}]
