"""Linear layer, minimum over groups of adjacent features, add a learned bias, then sigmoid."""
import torch
import torch.nn as nn

batch_size = 4096
in_features = 4096
out_features = 4096
group_size = 8  # ~137 GFLOP, ~3 ms


class Model(nn.Module):
    def __init__(self, in_features, out_features, group_size):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.group_size = group_size
        self.bias = nn.Parameter(0.5 + 0.3 * torch.randn(out_features // group_size))

    def forward(self, x):
        y = self.linear(x)
        y = y.view(y.shape[0], -1, self.group_size).amin(dim=-1)
        return torch.sigmoid(2.0 * (y + self.bias))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, group_size]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "in_features": 96, "out_features": 128}
HELD_OUT = [{"batch_size": 3001, "in_features": 4097, "out_features": 3003, "group_size": 7}]
HELD_OUT_SMALL = [{"batch_size": 9, "in_features": 43, "out_features": 35, "group_size": 5}]
