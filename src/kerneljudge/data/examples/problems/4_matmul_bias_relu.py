"""Fully connected layer followed by ReLU: out = relu(x @ weight.T + bias)."""
import math

import torch
import torch.nn as nn

batch_size = 4096
in_features = 4096
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        return torch.relu(x @ self.weight.t() + self.bias)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


# kerneljudge metadata: never shown to a model
CATEGORY = "matmul"
SMALL = {"batch_size": 8, "in_features": 24, "out_features": 20}
HELD_OUT = [{"batch_size": 1000, "in_features": 1003, "out_features": 997}]
HELD_OUT_SMALL = [{"batch_size": 5, "in_features": 7, "out_features": 3}]
