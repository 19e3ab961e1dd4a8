"""Causal grouped-query attention: 32 query heads share 8 key/value heads (each KV head serves 4 query heads)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
num_heads = 32
num_kv_heads = 8
seq_len = 2048
head_dim = 128  # ~275 GFLOP dense (half needed under the mask), ~6 ms; q/out 134 MB, k/v 34 MB each


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        # q: (batch, heads, seq, head_dim); k, v: (batch, kv_heads, seq, head_dim)
        group = q.shape[1] // k.shape[1]
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    q = torch.randn(batch_size, num_heads, seq_len, head_dim)
    k = torch.randn(batch_size, num_kv_heads, seq_len, head_dim)
    v = torch.randn(batch_size, num_kv_heads, seq_len, head_dim)
    return [q, k, v]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "attention"
TAGS = ["llm", "gqa", "causal"]
SMALL = {"batch_size": 2, "num_heads": 8, "num_kv_heads": 2, "seq_len": 128, "head_dim": 32}
HELD_OUT = [{"batch_size": 3, "num_heads": 28, "num_kv_heads": 4, "seq_len": 2047, "head_dim": 128}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 6, "num_kv_heads": 3, "seq_len": 77, "head_dim": 32}]
