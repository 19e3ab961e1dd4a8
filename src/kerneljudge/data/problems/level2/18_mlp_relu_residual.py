"""Two-layer MLP block with a residual: x + W2 relu(W1 x + b1) + b2."""
import torch
import torch.nn as nn

batch_size = 4096
features = 2048
hidden = 4096  # 2 GEMMs, ~137 GFLOP, ~3 ms


class Model(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, features)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features, hidden]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "features": 64, "hidden": 128}
HELD_OUT = [{"batch_size": 3001, "features": 2001, "hidden": 4001}]
HELD_OUT_SMALL = [{"batch_size": 9, "features": 37, "hidden": 71}]
