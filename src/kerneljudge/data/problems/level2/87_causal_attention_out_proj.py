"""Causal multi-head attention from given q, k, v: scaled scores, causal mask, softmax, values, merge heads, output projection."""
import torch
import torch.nn as nn

batch_size = 4
num_heads = 16
seq_len = 1024
head_dim = 128  # ~34 GFLOP attention + ~34 GFLOP projection, 268 MB scores, ~2.5 ms


class Model(nn.Module):
    def __init__(self, num_heads, head_dim):
        super().__init__()
        self.o_proj = nn.Linear(num_heads * head_dim, num_heads * head_dim, bias=False)

    def forward(self, q, k, v):
        b, h, s, d = q.shape
        scores = torch.matmul(q, k.transpose(-2, -1)) * (d ** -0.5)
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, h * d))


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [num_heads, head_dim]


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = ["llm"]
SMALL = {"batch_size": 2, "num_heads": 2, "seq_len": 16, "head_dim": 16}
HELD_OUT = [{"batch_size": 3, "num_heads": 12, "seq_len": 1021, "head_dim": 80}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "seq_len": 13, "head_dim": 12}]
