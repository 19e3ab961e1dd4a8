"""Speech feature-encoder layer: strided 1D convolution, GELU, then LayerNorm over channels per time step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 512
length = 8192  # stride-2 k3 conv: ~103 GFLOP + transposed norm over 134 MB, ~2.5 ms


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 3, stride=2, bias=False)
        self.norm = nn.LayerNorm(channels)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(channels))
            self.norm.bias.copy_(0.2 * torch.randn(channels))

    def forward(self, x):
        y = F.gelu(self.conv(x))
        return self.norm(y.transpose(1, 2)).transpose(1, 2)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels]


# kerneljudge metadata
CATEGORY = "fusion-conv"
TAGS = ["audio"]
SMALL = {"batch_size": 2, "channels": 32, "length": 64}
HELD_OUT = [{"batch_size": 13, "channels": 509, "length": 8001}]
HELD_OUT_SMALL = [{"batch_size": 3, "channels": 19, "length": 37}]
