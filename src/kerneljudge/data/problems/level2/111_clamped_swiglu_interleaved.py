"""Clamped SwiGLU MLP with interleaved gate/up columns: fused gate_up GEMM, clamps, gate*sigmoid(alpha*gate)*(up+1), down GEMM."""
import torch
import torch.nn as nn

num_tokens = 2048
hidden = 2880
intermediate = 2880  # GEMMs 2880->5760 and 2880->2880: ~102 GFLOP, ~2.5 ms
limit = 7.0
alpha = 1.702


class Model(nn.Module):
    def __init__(self, hidden, intermediate, limit, alpha):
        super().__init__()
        self.gate_up = nn.Linear(hidden, 2 * intermediate)
        self.down = nn.Linear(intermediate, hidden)
        with torch.no_grad():
            self.gate_up.weight.normal_(0.0, 4.0 / hidden ** 0.5)
        self.limit = limit
        self.alpha = alpha

    def forward(self, x):
        h = self.gate_up(x)
        gate = h[..., 0::2].clamp(max=self.limit)
        up = h[..., 1::2].clamp(min=-self.limit, max=self.limit)
        glu = gate * torch.sigmoid(self.alpha * gate)
        return self.down((up + 1.0) * glu)


def get_inputs():
    return [torch.randn(num_tokens, hidden)]


def get_init_inputs():
    return [hidden, intermediate, limit, alpha]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm"]
SMALL = {"num_tokens": 32, "hidden": 64, "intermediate": 48}
HELD_OUT = [{"num_tokens": 2001, "hidden": 2877, "intermediate": 2883}]
HELD_OUT_SMALL = [{"num_tokens": 7, "hidden": 29, "intermediate": 37}]
