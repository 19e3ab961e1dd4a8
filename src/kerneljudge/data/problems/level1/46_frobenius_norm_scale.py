"""Rescale a whole tensor to unit RMS with its Frobenius norm: y = x * sqrt(numel) / ||x||_F."""
import math

import torch
import torch.nn as nn

batch_size = 16
channels = 64
height = 512
width = 512  # 1 GiB in + out; global norm pass + scale pass: ~3.2 GB moved, ~1.0 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        norm = torch.linalg.vector_norm(x)  # Frobenius norm of the whole tensor
        return x * (math.sqrt(x.numel()) / norm)


def get_inputs():
    # per-(sample, channel) scales, so the global RMS is far from 1
    scale = 0.5 + 4.0 * torch.rand(batch_size, channels, 1, 1)
    return [torch.randn(batch_size, channels, height, width).mul_(scale)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "norm"
TAGS = []
SMALL = {"batch_size": 2, "channels": 8, "height": 32, "width": 32}
HELD_OUT = [{"batch_size": 13, "channels": 67, "height": 509, "width": 515}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 5, "height": 13, "width": 17}]
