"""Linear layer, exact GELU, then LayerNorm over the output features."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
in_features = 2048
out_features = 4096  # ~69 GFLOP + 3 passes over 64 MB, ~1.6 ms


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(out_features))
            self.norm.bias.copy_(0.1 * torch.randn(out_features))

    def forward(self, x):
        return self.norm(F.gelu(self.linear(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "in_features": 64, "out_features": 128}
HELD_OUT = [{"batch_size": 2047, "in_features": 2001, "out_features": 3073}]
HELD_OUT_SMALL = [{"batch_size": 7, "in_features": 45, "out_features": 99}]
