"""Linear layer to twice the width, GLU (first half times sigmoid of second half), then hardtanh."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
in_features = 4096
out_features = 2048  # GEMM to 2*out_features: ~137 GFLOP, ~3 ms


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, 2 * out_features)

    def forward(self, x):
        y = F.glu(self.linear(x), dim=-1)
        return F.hardtanh(y, -0.25, 0.25)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "in_features": 96, "out_features": 64}
HELD_OUT = [{"batch_size": 3001, "in_features": 4093, "out_features": 1999}]
HELD_OUT_SMALL = [{"batch_size": 9, "in_features": 41, "out_features": 29}]
