"""Squared-ReLU MLP: up-projection, ReLU, square, down-projection."""
import torch
import torch.nn as nn

num_tokens = 4096
hidden = 2048
intermediate = 6144  # 2 GEMMs, ~206 GFLOP, ~4.5 ms


class Model(nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(torch.relu(self.up_proj(x)).square())


def get_inputs():
    return [torch.randn(num_tokens, hidden)]


def get_init_inputs():
    return [hidden, intermediate]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm"]
SMALL = {"num_tokens": 32, "hidden": 64, "intermediate": 128}
HELD_OUT = [{"num_tokens": 3001, "hidden": 2047, "intermediate": 6001}]
HELD_OUT_SMALL = [{"num_tokens": 7, "hidden": 29, "intermediate": 53}]
