"""3D average pooling with a 3x3x3 window, stride 2, padding 1 (padding excluded from the average)."""
import torch
import torch.nn as nn

batch_size = 16
channels = 32
depth = 64
height = 128
width = 128  # in 2.1 GB, out 0.27 GB; 27 taps per output, ~1 ms
kernel_size = 3
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size, stride=stride, padding=padding, count_include_pad=False)

    def forward(self, x):
        # accumulate in fp32 (also: the CPU kernel has no half-precision version)
        return self.pool(x.float()).to(x.dtype)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]


# kerneljudge metadata
CATEGORY = "pool"
TAGS = ["avgpool", "3d"]
SMALL = {"batch_size": 2, "channels": 4, "depth": 16, "height": 24, "width": 24}
HELD_OUT = [{"batch_size": 13, "channels": 31, "depth": 63, "height": 131, "width": 125}]
HELD_OUT_SMALL = [{"batch_size": 1, "channels": 3, "depth": 9, "height": 15, "width": 21}]
