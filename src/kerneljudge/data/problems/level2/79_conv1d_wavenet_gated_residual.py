"""WaveNet residual layer: causal dilated conv, tanh * sigmoid gate, 1x1 conv, residual add."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 128
length = 16384
dilation = 4  # k2 dilated conv to 256 ch (~34 GFLOP) + 1x1 conv (~9 GFLOP), ~1.8 ms


class Model(nn.Module):
    def __init__(self, channels, dilation):
        super().__init__()
        self.dilation = dilation
        self.dilated = nn.Conv1d(channels, 2 * channels, 2, dilation=dilation)
        self.out = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        h = self.dilated(F.pad(x, (self.dilation, 0)))  # causal: pad on the left only
        a, b = h.chunk(2, dim=1)
        return x + self.out(torch.tanh(a) * torch.sigmoid(b))


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels, dilation]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = ["audio"]
SMALL = {"batch_size": 2, "channels": 16, "length": 128, "dilation": 2}
HELD_OUT = [{"batch_size": 15, "channels": 125, "length": 16001, "dilation": 8}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 7, "length": 53, "dilation": 3}]
