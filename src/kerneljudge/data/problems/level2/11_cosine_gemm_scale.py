"""Cosine-similarity classifier: L2-normalise rows of the input and of the weight, matmul, scale, add a margin bias."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
in_features = 2048
num_classes = 8192  # ~275 GFLOP, ~6 ms
scale = 16.0


class Model(nn.Module):
    def __init__(self, in_features, num_classes, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_classes, in_features))
        self.bias = nn.Parameter(0.1 * torch.randn(num_classes))
        self.scale = scale

    def forward(self, x):
        cos = F.normalize(x, dim=-1) @ F.normalize(self.weight, dim=-1).t()
        return self.scale * cos + self.bias


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, num_classes, scale]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 32, "in_features": 64, "num_classes": 96}
HELD_OUT = [{"batch_size": 5001, "in_features": 2047, "num_classes": 6007}]
HELD_OUT_SMALL = [{"batch_size": 7, "in_features": 29, "num_classes": 53}]
