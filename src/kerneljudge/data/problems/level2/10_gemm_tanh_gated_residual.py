"""Square linear layer, tanh, learned per-feature gate, then a residual add of the input."""
import torch
import torch.nn as nn

batch_size = 8192
features = 3072  # ~155 GFLOP, ~3.3 ms


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.gate = nn.Parameter(0.5 + 0.25 * torch.randn(features))

    def forward(self, x):
        return x + self.gate * torch.tanh(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 48, "features": 96}
HELD_OUT = [{"batch_size": 4001, "features": 3001}]
HELD_OUT_SMALL = [{"batch_size": 7, "features": 61}]
