"""Causal sliding-window attention: scaled scores, mask keys outside the last `window` positions, softmax, values."""
import torch
import torch.nn as nn

batch_size = 2
num_heads = 16
seq_len = 2048
head_dim = 64
window = 256  # ~34 GFLOP, 537 MB score tensors, ~2 ms (a windowed kernel needs ~1/8 of it)


class Model(nn.Module):
    def __init__(self, window):
        super().__init__()
        self.window = window

    def forward(self, q, k, v):
        s, d = q.shape[2], q.shape[3]
        pos = torch.arange(s, device=q.device)
        dist = pos[:, None] - pos[None, :]  # i - j
        hidden = (dist < 0) | (dist >= self.window)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (d ** -0.5)
        scores = scores.masked_fill(hidden, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [window]


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = ["llm"]
SMALL = {"batch_size": 2, "num_heads": 2, "seq_len": 32, "head_dim": 16, "window": 8}
HELD_OUT = [{"batch_size": 2, "num_heads": 12, "seq_len": 2001, "head_dim": 72, "window": 301}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "seq_len": 19, "head_dim": 12, "window": 5}]
