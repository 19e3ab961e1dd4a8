"""Scaled dot-product attention, non-causal (encoder self-attention): softmax(q k^T / sqrt(d)) v."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_heads = 16
seq_len = 2048
head_dim = 64  # ~137 GFLOP, ~6 ms; q/k/v/out 67 MB each


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        # q, k, v: (batch, heads, seq, head_dim)
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    # queries scaled by 2: peakier attention, as in trained models (outputs are not a near-uniform average)
    return [2.0 * torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "attention"
TAGS = ["llm", "sdpa"]
SMALL = {"batch_size": 2, "num_heads": 4, "seq_len": 128, "head_dim": 32}
HELD_OUT = [{"batch_size": 7, "num_heads": 12, "seq_len": 2047, "head_dim": 64}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "seq_len": 77, "head_dim": 24}]
