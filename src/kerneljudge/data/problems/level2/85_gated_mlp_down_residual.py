"""Full LLM gated MLP with residual: residual + down(silu(gate(x)) * up(x))."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 2048
hidden = 2048
intermediate = 5632  # 3 GEMMs, ~142 GFLOP, ~3 ms


class Model(nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x, residual):
        h = F.silu(self.gate_proj(x)) * self.up_proj(x)
        return residual + self.down_proj(h)


def get_inputs():
    return [torch.randn(num_tokens, hidden), torch.randn(num_tokens, hidden)]


def get_init_inputs():
    return [hidden, intermediate]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm"]
SMALL = {"num_tokens": 32, "hidden": 64, "intermediate": 176}
HELD_OUT = [{"num_tokens": 1999, "hidden": 2051, "intermediate": 5503}]
HELD_OUT_SMALL = [{"num_tokens": 9, "hidden": 35, "intermediate": 71}]
