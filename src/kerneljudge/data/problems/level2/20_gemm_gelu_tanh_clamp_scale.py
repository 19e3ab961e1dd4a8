"""Linear layer, tanh-approximated GELU, clamp from above, then multiply by a constant."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
in_features = 4096
out_features = 2048  # ~137 GFLOP, ~3 ms
max_value = 0.5
scale = 3.0


class Model(nn.Module):
    def __init__(self, in_features, out_features, max_value, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.max_value = max_value
        self.scale = scale

    def forward(self, x):
        y = F.gelu(self.linear(x), approximate="tanh")
        return torch.clamp(y, max=self.max_value) * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, max_value, scale]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "in_features": 128, "out_features": 64}
HELD_OUT = [{"batch_size": 6001, "in_features": 4001, "out_features": 2003}]
HELD_OUT_SMALL = [{"batch_size": 11, "in_features": 51, "out_features": 31}]
