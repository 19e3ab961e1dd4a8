"""Causal attention with ALiBi: a per-head linear distance penalty -slope_h * (i - j) added to the scores."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
num_heads = 16
seq_len = 2048
head_dim = 64  # ~69 GFLOP dense, ~3 ms; q/k/v/out 34 MB each, bias (heads, seq, seq) 268 MB


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        # q, k, v: (batch, heads, seq, head_dim)
        h, s = q.shape[1], q.shape[2]
        slopes = torch.pow(2.0, -8.0 * torch.arange(1, h + 1, device=q.device, dtype=torch.float32) / h)
        pos = torch.arange(s, device=q.device)
        rel = (pos[None, :] - pos[:, None]).float()  # j - i, <= 0 for visible keys
        bias = slopes[:, None, None] * rel[None]
        bias = bias.masked_fill(rel[None] > 0, float("-inf"))
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype))


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "attention"
TAGS = ["llm", "alibi", "causal", "bias"]
SMALL = {"batch_size": 2, "num_heads": 4, "seq_len": 128, "head_dim": 32}
HELD_OUT = [{"batch_size": 3, "num_heads": 12, "seq_len": 2047, "head_dim": 64}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 5, "seq_len": 97, "head_dim": 24}]
