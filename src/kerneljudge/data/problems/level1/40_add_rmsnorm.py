"""Residual add then RMSNorm (pre-norm transformer step): h = x + residual, y = weight * h / sqrt(mean(h^2) + eps)."""
import torch
import torch.nn as nn

tokens = 32768
hidden = 4096  # x, residual 0.5 GiB each; eager add + RMSNorm: ~4.8 GB moved, ~1.6 ms, peak 3 GiB


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.eps = 1e-6
        self.weight = nn.Parameter(1.0 + 0.3 * torch.randn(hidden))

    def forward(self, x, residual):
        h = (x + residual).float()
        h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def get_inputs():
    # the residual stream carries a per-token scale; the new branch output is smaller
    residual = torch.randn(tokens, hidden).mul_(0.5 + 3.0 * torch.rand(tokens, 1))
    return [0.5 * torch.randn(tokens, hidden), residual]


def get_init_inputs():
    return [hidden]


# kerneljudge metadata
CATEGORY = "norm"
TAGS = ["llm"]
SMALL = {"tokens": 64, "hidden": 1024}
HELD_OUT = [{"tokens": 30001, "hidden": 4096}, {"tokens": 9999, "hidden": 8190}]
HELD_OUT_SMALL = [{"tokens": 13, "hidden": 1001}]
