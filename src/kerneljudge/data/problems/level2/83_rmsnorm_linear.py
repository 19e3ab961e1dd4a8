"""LLM pre-norm projection: RMSNorm (statistics in fp32) with a learned weight, then a bias-free linear layer."""
import torch
import torch.nn as nn

batch_size = 4
seq_len = 1024
hidden = 4096
out_features = 4096  # ~137 GFLOP, ~3 ms
eps = 1e-5


class Model(nn.Module):
    def __init__(self, hidden, out_features, eps):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.2 * torch.randn(hidden))
        self.proj = nn.Linear(hidden, out_features, bias=False)
        self.eps = eps

    def forward(self, x):
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return self.proj(self.weight * h.to(x.dtype))


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden, out_features, eps]


# kerneljudge metadata
CATEGORY = "fusion-norm"
TAGS = ["llm"]
SMALL = {"batch_size": 2, "seq_len": 16, "hidden": 64, "out_features": 96}
HELD_OUT = [{"batch_size": 3, "seq_len": 1001, "hidden": 4090, "out_features": 4099}]
HELD_OUT_SMALL = [{"batch_size": 1, "seq_len": 13, "hidden": 37, "out_features": 29}]
