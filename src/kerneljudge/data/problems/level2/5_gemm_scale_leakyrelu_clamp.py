"""Linear layer, multiply by a constant, LeakyReLU, then clamp to a fixed range."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
in_features = 4096
out_features = 4096  # ~137 GFLOP, ~3 ms
scale = 1.5
negative_slope = 0.1
clamp_value = 0.75


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale, negative_slope, clamp_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale
        self.negative_slope = negative_slope
        self.clamp_value = clamp_value

    def forward(self, x):
        y = F.leaky_relu(self.linear(x) * self.scale, self.negative_slope)
        return torch.clamp(y, -self.clamp_value, self.clamp_value)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale, negative_slope, clamp_value]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 48, "in_features": 96, "out_features": 64}
HELD_OUT = [{"batch_size": 2999, "in_features": 4100, "out_features": 3001}]
HELD_OUT_SMALL = [{"batch_size": 11, "in_features": 81, "out_features": 37}]
