"""Linear layer, constant scale, logsumexp over small groups of output features, then Mish."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
in_features = 4096
out_features = 4096
group_size = 16  # ~137 GFLOP, ~3 ms
scale = 4.0


class Model(nn.Module):
    def __init__(self, in_features, out_features, group_size, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.group_size = group_size
        self.scale = scale

    def forward(self, x):
        y = self.linear(x) * self.scale
        y = y.view(y.shape[0], -1, self.group_size)
        return F.mish(torch.logsumexp(y, dim=-1) - 4.0)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, group_size, scale]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "in_features": 96, "out_features": 128}
HELD_OUT = [{"batch_size": 3001, "in_features": 4097, "out_features": 3072, "group_size": 12}]
HELD_OUT_SMALL = [{"batch_size": 5, "in_features": 39, "out_features": 60, "group_size": 12}]
