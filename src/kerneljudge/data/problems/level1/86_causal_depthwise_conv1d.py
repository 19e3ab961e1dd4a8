"""Causal depthwise 1D convolution (kernel 4, left padding), as in Mamba / linear-attention token mixers."""
import torch
import torch.nn as nn

batch_size = 16
dim = 4096
seq_len = 4096  # in 1.1 GB, out 1.1 GB; memory-bound, ~0.6 ms
kernel_size = 4


class Model(nn.Module):
    def __init__(self, dim, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(dim, dim, kernel_size, groups=dim, padding=kernel_size - 1)

    def forward(self, x):
        # x: (batch, dim, seq_len); keep the first seq_len outputs so position t sees only inputs <= t
        return self.conv(x)[..., : x.shape[-1]]


def get_inputs():
    return [torch.randn(batch_size, dim, seq_len)]


def get_init_inputs():
    return [dim, kernel_size]


# kerneljudge metadata
CATEGORY = "conv"
TAGS = ["llm", "ssm", "depthwise", "causal", "1d"]
SMALL = {"batch_size": 2, "dim": 64, "seq_len": 512}
HELD_OUT = [{"batch_size": 13, "dim": 4100, "seq_len": 4099}]
HELD_OUT_SMALL = [{"batch_size": 3, "dim": 37, "seq_len": 301}]
