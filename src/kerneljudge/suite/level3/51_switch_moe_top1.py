"""Switch-Transformer-style top-1 mixture of experts: fp32 router softmax, each token goes to its arg-max expert (a GELU
FFN) and the expert output is scaled by the router probability; pre-LayerNorm and residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 1024
hidden = 1024
ffn = 4096
num_experts = 16     # ~0.14 TFLOP in the experts (1 of 16 per token) + gathers; ~4-10 ms


class Model(nn.Module):
    def __init__(self, hidden, ffn, num_experts):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.router = nn.Linear(hidden, num_experts, bias=False)
        nn.init.normal_(self.router.weight, 0.0, 2.0 * hidden ** -0.5)
        self.w_in = nn.Parameter(torch.randn(num_experts, hidden, ffn) * hidden ** -0.5)
        self.b_in = nn.Parameter(0.1 * torch.randn(num_experts, ffn))
        self.w_out = nn.Parameter(torch.randn(num_experts, ffn, hidden) * 2.0 * ffn ** -0.5)

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        h = self.norm(x)
        probs = torch.softmax(F.linear(h.float(), self.router.weight.float()), dim=-1)
        p, chosen = probs.max(dim=-1)
        out = torch.zeros_like(x)
        for e in range(self.w_in.shape[0]):
            tok = torch.nonzero(chosen == e).squeeze(-1)
            if tok.numel():
                y = F.gelu(h[tok] @ self.w_in[e] + self.b_in[e]) @ self.w_out[e]
                out[tok] = y * p[tok, None].to(x.dtype)
        return (x + out).view(shape)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden, ffn, num_experts]


CATEGORY = "moe"
TAGS = ["llm", "moe", "switch", "top-1", "routing", "gelu", "gather-scatter", "layernorm"]
SMALL = {"batch_size": 2, "seq_len": 32, "hidden": 32, "ffn": 64, "num_experts": 4}
HELD_OUT = [{"batch_size": 5, "seq_len": 999, "num_experts": 11}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 23, "hidden": 40, "ffn": 56, "num_experts": 5}]
