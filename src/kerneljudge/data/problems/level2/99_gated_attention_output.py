"""Gated attention output: sigmoid gate projected from the layer input multiplies the attention output, then the output projection."""
import torch
import torch.nn as nn

num_tokens = 8192
hidden = 2048
attn_dim = 2048  # 2 GEMMs, ~137 GFLOP, ~3 ms


class Model(nn.Module):
    def __init__(self, hidden, attn_dim):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, attn_dim, bias=False)
        self.o_proj = nn.Linear(attn_dim, hidden, bias=False)

    def forward(self, attn_out, x):
        return self.o_proj(attn_out * torch.sigmoid(self.gate_proj(x)))


def get_inputs():
    return [torch.randn(num_tokens, attn_dim), torch.randn(num_tokens, hidden)]


def get_init_inputs():
    return [hidden, attn_dim]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm"]
SMALL = {"num_tokens": 32, "hidden": 64, "attn_dim": 48}
HELD_OUT = [{"num_tokens": 6001, "hidden": 2047, "attn_dim": 1999}]
HELD_OUT_SMALL = [{"num_tokens": 9, "hidden": 29, "attn_dim": 37}]
