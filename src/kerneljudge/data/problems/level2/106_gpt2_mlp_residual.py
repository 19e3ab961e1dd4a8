"""GPT-2 MLP sublayer: LayerNorm, c_fc linear, tanh-approximated GELU, c_proj linear, residual add."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 1024
hidden = 1024  # 2 GEMMs (1024 <-> 4096): ~137 GFLOP, ~3 ms


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=1e-5)
        self.c_fc = nn.Linear(hidden, 4 * hidden)
        self.c_proj = nn.Linear(4 * hidden, hidden)
        with torch.no_grad():
            self.ln.weight.copy_(1.0 + 0.2 * torch.randn(hidden))
            self.ln.bias.copy_(0.1 * torch.randn(hidden))

    def forward(self, x):
        return x + self.c_proj(F.gelu(self.c_fc(self.ln(x)), approximate="tanh"))


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm", "transformer"]
SMALL = {"batch_size": 2, "seq_len": 16, "hidden": 32}
HELD_OUT = [{"batch_size": 7, "seq_len": 1001, "hidden": 1021}]
HELD_OUT_SMALL = [{"batch_size": 1, "seq_len": 13, "hidden": 27}]
