"""BatchNorm2d in inference mode: normalise each channel with stored running statistics, then scale and shift."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 20
channels = 64
height = 512
width = 512  # 1.25 GiB in + out: ~2.7 GB moved, ~1.1 ms


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.eps = 1e-5
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(channels))
        self.bias = nn.Parameter(0.5 * torch.randn(channels))
        # non-trivial running statistics, so the op is not close to an identity
        self.register_buffer("running_mean", 0.5 * torch.randn(channels))
        self.register_buffer("running_var", 0.25 + 2.0 * torch.rand(channels))

    def forward(self, x):
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            training=False, eps=self.eps)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]


# kerneljudge metadata
CATEGORY = "norm"
TAGS = []
SMALL = {"batch_size": 2, "channels": 8, "height": 32, "width": 32}
HELD_OUT = [{"batch_size": 17, "channels": 67, "height": 509, "width": 515}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 5, "height": 13, "width": 17}]
