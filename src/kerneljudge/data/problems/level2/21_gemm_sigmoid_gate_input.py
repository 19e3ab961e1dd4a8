"""Feature gating: sigmoid of a square linear layer multiplies the input, then LayerNorm."""
import torch
import torch.nn as nn

batch_size = 8192
features = 3072  # ~155 GFLOP, ~3.5 ms


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.gate = nn.Linear(features, features)
        self.norm = nn.LayerNorm(features)

    def forward(self, x):
        return self.norm(x * torch.sigmoid(2.0 * self.gate(x)))


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "features": 96}
HELD_OUT = [{"batch_size": 3999, "features": 3001}]
HELD_OUT_SMALL = [{"batch_size": 9, "features": 45}]
