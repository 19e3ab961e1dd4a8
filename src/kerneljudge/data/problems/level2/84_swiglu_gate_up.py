"""LLM MLP front half: gate and up projections of the same input, combined as silu(gate) * up."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 4096
hidden = 2048
intermediate = 5632  # 2 GEMMs, ~189 GFLOP, ~4 ms


class Model(nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)

    def forward(self, x):
        return F.silu(self.gate_proj(x)) * self.up_proj(x)


def get_inputs():
    return [torch.randn(num_tokens, hidden)]


def get_init_inputs():
    return [hidden, intermediate]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm"]
SMALL = {"num_tokens": 32, "hidden": 64, "intermediate": 176}
HELD_OUT = [{"num_tokens": 3001, "hidden": 2047, "intermediate": 5461}]
HELD_OUT_SMALL = [{"num_tokens": 7, "hidden": 33, "intermediate": 90}]
