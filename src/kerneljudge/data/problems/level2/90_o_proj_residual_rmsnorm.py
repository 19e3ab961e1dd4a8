"""Attention output projection, residual add, then RMSNorm (fp32 statistics) for the next sublayer."""
import torch
import torch.nn as nn

num_tokens = 4096
hidden = 4096  # ~137 GFLOP, ~3 ms
eps = 1e-6


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        self.weight = nn.Parameter(1.0 + 0.2 * torch.randn(hidden))
        self.eps = eps

    def forward(self, attn_out, residual):
        h = (residual + self.o_proj(attn_out)).float()
        h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return self.weight * h.to(attn_out.dtype)


def get_inputs():
    return [torch.randn(num_tokens, hidden), torch.randn(num_tokens, hidden)]


def get_init_inputs():
    return [hidden, eps]


# kerneljudge metadata
CATEGORY = "fusion-norm"
TAGS = ["llm"]
SMALL = {"num_tokens": 32, "hidden": 96}
HELD_OUT = [{"num_tokens": 3001, "hidden": 4093}]
HELD_OUT_SMALL = [{"num_tokens": 7, "hidden": 45}]
