"""Transformer MLP entry: LayerNorm, linear up-projection to 4x width, then GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 8192
hidden = 1536  # GEMM 1536 -> 6144: ~155 GFLOP, ~3.5 ms


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(hidden))
            self.norm.bias.copy_(0.1 * torch.randn(hidden))

    def forward(self, x):
        return F.gelu(self.fc(self.norm(x)))


def get_inputs():
    return [torch.randn(num_tokens, hidden) * 2.0 + 0.5]


def get_init_inputs():
    return [hidden]


# kerneljudge metadata
CATEGORY = "fusion-norm"
TAGS = ["llm"]
SMALL = {"num_tokens": 32, "hidden": 48}
HELD_OUT = [{"num_tokens": 6001, "hidden": 1531}]
HELD_OUT_SMALL = [{"num_tokens": 7, "hidden": 29}]
