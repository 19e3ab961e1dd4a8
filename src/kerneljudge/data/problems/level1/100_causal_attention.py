"""Causal scaled dot-product attention (decoder self-attention), head_dim 128."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_heads = 16
seq_len = 2048
head_dim = 128  # ~275 GFLOP dense (half needed under the mask), ~6 ms; q/k/v/out 134 MB each


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        # q, k, v: (batch, heads, seq, head_dim)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "attention"
TAGS = ["llm", "sdpa", "causal"]
SMALL = {"batch_size": 2, "num_heads": 4, "seq_len": 128, "head_dim": 32}
HELD_OUT = [{"batch_size": 5, "num_heads": 16, "seq_len": 2049, "head_dim": 128}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "seq_len": 91, "head_dim": 40}]
