"""GEGLU feed-forward input: one linear layer to twice the width, then gelu(first half) * second half."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 4096
hidden = 2048
intermediate = 4096  # GEMM 2048 -> 8192: ~137 GFLOP, ~3 ms


class Model(nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.proj = nn.Linear(hidden, 2 * intermediate)

    def forward(self, x):
        a, b = self.proj(x).chunk(2, dim=-1)
        return F.gelu(a) * b


def get_inputs():
    return [torch.randn(num_tokens, hidden)]


def get_init_inputs():
    return [hidden, intermediate]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm"]
SMALL = {"num_tokens": 32, "hidden": 64, "intermediate": 96}
HELD_OUT = [{"num_tokens": 3001, "hidden": 2045, "intermediate": 4001}]
HELD_OUT_SMALL = [{"num_tokens": 7, "hidden": 37, "intermediate": 45}]
