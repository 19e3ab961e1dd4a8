"""Two linear layers on two different inputs, summed, then ReLU."""
import torch
import torch.nn as nn

batch_size = 4096
in_features_a = 2048
in_features_b = 1024
out_features = 4096  # ~103 GFLOP, ~2.2 ms


class Model(nn.Module):
    def __init__(self, in_features_a, in_features_b, out_features):
        super().__init__()
        self.proj_a = nn.Linear(in_features_a, out_features)
        self.proj_b = nn.Linear(in_features_b, out_features, bias=False)

    def forward(self, a, b):
        return torch.relu(self.proj_a(a) + self.proj_b(b))


def get_inputs():
    return [torch.randn(batch_size, in_features_a), torch.randn(batch_size, in_features_b)]


def get_init_inputs():
    return [in_features_a, in_features_b, out_features]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "in_features_a": 64, "in_features_b": 48, "out_features": 80}
HELD_OUT = [{"batch_size": 3001, "in_features_a": 2045, "in_features_b": 1001, "out_features": 3003}]
HELD_OUT_SMALL = [{"batch_size": 5, "in_features_a": 37, "in_features_b": 23, "out_features": 41}]
