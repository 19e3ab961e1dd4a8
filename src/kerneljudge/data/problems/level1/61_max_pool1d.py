"""1D max pooling (kernel 5, stride 2, padding 2) over long multi-channel sequences."""
import torch
import torch.nn as nn

batch_size = 64
channels = 128
length = 32768  # in 1.07 GB, out 537 MB (+ int64 indices kept internally by eager); ~1.5 ms
kernel_size = 5
stride = 2
padding = 2


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [kernel_size, stride, padding]


# kerneljudge metadata
CATEGORY = "pool"
TAGS = ["maxpool", "1d"]
SMALL = {"batch_size": 4, "channels": 16, "length": 2048}
HELD_OUT = [{"batch_size": 37, "channels": 131, "length": 30001}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 7, "length": 1001}]
