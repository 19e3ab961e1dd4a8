"""Linear layer, ReLU, then a learned per-feature scale."""
import torch
import torch.nn as nn

batch_size = 4096
in_features = 4096
out_features = 4096  # ~137 GFLOP, ~3 ms


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(1.0 + 0.5 * torch.randn(out_features))

    def forward(self, x):
        return torch.relu(self.linear(x)) * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "in_features": 96, "out_features": 80}
HELD_OUT = [{"batch_size": 3001, "in_features": 4093, "out_features": 2999}]
HELD_OUT_SMALL = [{"batch_size": 13, "in_features": 77, "out_features": 51}]
