"""Linear layer, RMSNorm over the output features with a learned weight, then GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
in_features = 2048
out_features = 4096  # ~137 GFLOP, ~3 ms
eps = 1e-6


class Model(nn.Module):
    def __init__(self, in_features, out_features, eps):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.weight = nn.Parameter(1.0 + 0.2 * torch.randn(out_features))
        self.eps = eps

    def forward(self, x):
        y = self.linear(x)
        y = y * torch.rsqrt(y.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight
        return F.gelu(y)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, eps]


# kerneljudge metadata
CATEGORY = "fusion-norm"
TAGS = []
SMALL = {"batch_size": 32, "in_features": 64, "out_features": 96}
HELD_OUT = [{"batch_size": 5001, "in_features": 2047, "out_features": 3001}]
HELD_OUT_SMALL = [{"batch_size": 7, "in_features": 33, "out_features": 57}]
