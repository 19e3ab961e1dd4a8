"""Causal attention with learned per-head attention sinks: an extra logit column in the softmax that absorbs probability mass and is then dropped."""
import torch
import torch.nn as nn

batch_size = 4
num_heads = 16
seq_len = 1024
head_dim = 128  # ~34 GFLOP, 268 MB score tensors, ~2.5 ms


class Model(nn.Module):
    def __init__(self, num_heads):
        super().__init__()
        self.sinks = nn.Parameter(2.0 + torch.randn(num_heads))

    def forward(self, q, k, v):
        b, h, s, d = q.shape
        scores = torch.matmul(q, k.transpose(-2, -1)) * (d ** -0.5)
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        sink = self.sinks.view(1, h, 1, 1).expand(b, h, s, 1).to(scores.dtype)
        probs = torch.softmax(torch.cat([scores, sink], dim=-1), dim=-1)[..., :-1]
        return torch.matmul(probs, v)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [num_heads]


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = ["llm"]
SMALL = {"batch_size": 2, "num_heads": 2, "seq_len": 16, "head_dim": 16}
HELD_OUT = [{"batch_size": 3, "num_heads": 12, "seq_len": 1021, "head_dim": 80}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "seq_len": 13, "head_dim": 12}]
