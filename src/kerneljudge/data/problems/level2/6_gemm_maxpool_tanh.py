"""Linear layer, max-pool over windows of adjacent output features, then tanh."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
in_features = 4096
out_features = 4096
pool_size = 4  # ~137 GFLOP, ~3 ms


class Model(nn.Module):
    def __init__(self, in_features, out_features, pool_size):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.pool_size = pool_size

    def forward(self, x):
        y = self.linear(x).unsqueeze(1)
        y = F.max_pool1d(y, self.pool_size).squeeze(1)
        return torch.tanh(2.0 * y)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, pool_size]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "in_features": 96, "out_features": 128}
HELD_OUT = [{"batch_size": 3003, "in_features": 4099, "out_features": 3002, "pool_size": 3}]
HELD_OUT_SMALL = [{"batch_size": 7, "in_features": 53, "out_features": 61, "pool_size": 3}]
