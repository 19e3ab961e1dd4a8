"""Linear layer, BatchNorm1d in eval mode (running statistics), then HardSwish."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
in_features = 2048
out_features = 2048  # ~69 GFLOP, ~1.6 ms


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.2 * torch.randn(out_features))
            self.bn.running_var.copy_(0.2 + 0.4 * torch.rand(out_features))
            self.bn.weight.copy_(1.0 + 0.3 * torch.randn(out_features))
            self.bn.bias.copy_(0.2 * torch.randn(out_features))

    def forward(self, x):
        return F.hardswish(self.bn(self.linear(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 64, "in_features": 64, "out_features": 96}
HELD_OUT = [{"batch_size": 5003, "in_features": 2050, "out_features": 1999}]
HELD_OUT_SMALL = [{"batch_size": 9, "in_features": 33, "out_features": 71}]
