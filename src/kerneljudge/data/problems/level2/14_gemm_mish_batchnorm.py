"""Linear layer, Mish, then BatchNorm1d in eval mode with non-trivial running statistics."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
in_features = 3072
out_features = 2048  # ~103 GFLOP, ~2.3 ms


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=1e-3)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.2 + 0.1 * torch.randn(out_features))
            self.bn.running_var.copy_(0.1 + 0.2 * torch.rand(out_features))
            self.bn.weight.copy_(1.0 + 0.3 * torch.randn(out_features))
            self.bn.bias.copy_(0.1 * torch.randn(out_features))

    def forward(self, x):
        return self.bn(F.mish(self.linear(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 64, "in_features": 96, "out_features": 64}
HELD_OUT = [{"batch_size": 4099, "in_features": 3001, "out_features": 2047}]
HELD_OUT_SMALL = [{"batch_size": 11, "in_features": 35, "out_features": 27}]
