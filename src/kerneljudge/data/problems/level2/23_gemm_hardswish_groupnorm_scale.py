"""Linear layer, HardSwish, GroupNorm over feature groups, then a learned per-feature scale."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
in_features = 2048
out_features = 4096
num_groups = 64  # ~137 GFLOP, ~3.2 ms


class Model(nn.Module):
    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(num_groups, out_features)
        self.scale = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        return self.norm(F.hardswish(2.0 * self.linear(x))) * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "in_features": 64, "out_features": 128, "num_groups": 8}
HELD_OUT = [{"batch_size": 3001, "in_features": 2001, "out_features": 4000, "num_groups": 50}]
HELD_OUT_SMALL = [{"batch_size": 7, "in_features": 33, "out_features": 60, "num_groups": 5}]
