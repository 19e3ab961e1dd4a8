"""Attention pooling over a sequence: tanh(linear) scores, softmax over tokens, weighted sum of tokens."""
import torch
import torch.nn as nn

batch_size = 64
seq_len = 1024
features = 1024
hidden = 1024  # ~137 GFLOP, ~3 ms


class Model(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        self.proj = nn.Linear(features, hidden)
        self.query = nn.Parameter(torch.randn(hidden) / hidden ** 0.5)

    def forward(self, x):
        scores = torch.tanh(self.proj(x)) @ self.query          # (batch, seq)
        weights = torch.softmax(4.0 * scores, dim=-1)
        return torch.einsum("bs,bsf->bf", weights, x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, features)]


def get_init_inputs():
    return [features, hidden]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = []
SMALL = {"batch_size": 4, "seq_len": 32, "features": 48, "hidden": 64}
HELD_OUT = [{"batch_size": 37, "seq_len": 1501, "features": 1001, "hidden": 1030}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 13, "features": 21, "hidden": 19}]
