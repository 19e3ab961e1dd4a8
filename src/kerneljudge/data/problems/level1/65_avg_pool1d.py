"""1D average pooling (kernel 8, stride 4, padding 2, padding excluded from the average)."""
import torch
import torch.nn as nn

batch_size = 64
channels = 128
length = 65536  # in 2.1 GB, out 0.5 GB; memory-bound, ~0.7 ms
kernel_size = 8
stride = 4
padding = 2


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size, stride=stride, padding=padding, count_include_pad=False)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [kernel_size, stride, padding]


# kerneljudge metadata
CATEGORY = "pool"
TAGS = ["avgpool", "1d"]
SMALL = {"batch_size": 4, "channels": 16, "length": 2048}
HELD_OUT = [{"batch_size": 33, "channels": 127, "length": 65003}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 7, "length": 1003}]
