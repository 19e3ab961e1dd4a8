"""Causal multi-query attention: all 16 query heads share a single key/value head."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_heads = 16
seq_len = 2048
head_dim = 64  # ~137 GFLOP dense (half needed under the mask), ~4 ms; q/out 67 MB, k/v 4 MB each


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        # q: (batch, heads, seq, head_dim); k, v: (batch, 1, seq, head_dim), broadcast over heads
        k = k.expand(-1, q.shape[1], -1, -1)
        v = v.expand(-1, q.shape[1], -1, -1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    q = torch.randn(batch_size, num_heads, seq_len, head_dim)
    k = torch.randn(batch_size, 1, seq_len, head_dim)
    v = torch.randn(batch_size, 1, seq_len, head_dim)
    return [q, k, v]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "attention"
TAGS = ["llm", "mqa", "causal"]
SMALL = {"batch_size": 2, "num_heads": 4, "seq_len": 128, "head_dim": 32}
HELD_OUT = [{"batch_size": 7, "num_heads": 12, "seq_len": 2045, "head_dim": 64}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 5, "seq_len": 83, "head_dim": 24}]
