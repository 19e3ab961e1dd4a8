"""Linear layer, subtract a learned per-feature offset, multiply by a constant, then Mish."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
in_features = 2048
out_features = 4096  # ~137 GFLOP, ~3 ms
scale = 2.0


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.offset = nn.Parameter(0.5 * torch.randn(out_features))
        self.scale = scale

    def forward(self, x):
        return F.mish((self.linear(x) - self.offset) * self.scale)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "in_features": 64, "out_features": 96}
HELD_OUT = [{"batch_size": 6007, "in_features": 2001, "out_features": 3999}]
HELD_OUT_SMALL = [{"batch_size": 13, "in_features": 31, "out_features": 43}]
