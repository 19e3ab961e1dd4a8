"""InstanceNorm2d (no affine, no running stats): normalise each (sample, channel) plane over H and W."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 128
height = 256
width = 256  # 1 GiB in + out; stats pass + normalise pass: ~3.2 GB moved, ~1.3 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.eps = 1e-5

    def forward(self, x):
        return F.instance_norm(x, eps=self.eps)


def get_inputs():
    # per-(sample, channel) scale and offset, so normalising really changes the values
    scale = 0.5 + 2.0 * torch.rand(batch_size, channels, 1, 1)
    shift = torch.randn(batch_size, channels, 1, 1)
    return [torch.randn(batch_size, channels, height, width).mul_(scale).add_(shift)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "norm"
TAGS = []
SMALL = {"batch_size": 2, "channels": 8, "height": 32, "width": 32}
HELD_OUT = [{"batch_size": 29, "channels": 131, "height": 251, "width": 257}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 5, "height": 13, "width": 17}]
