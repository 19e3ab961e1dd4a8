"""Cross-attention (encoder-decoder): 1024 decoder queries attend to 4096 encoder keys/values, non-causal."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_heads = 16
q_len = 1024
kv_len = 4096
head_dim = 64  # ~137 GFLOP, ~6 ms; q/out 34 MB, k/v 134 MB each


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        # q: (batch, heads, q_len, head_dim); k, v: (batch, heads, kv_len, head_dim)
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    # queries scaled by 2: peakier attention, as in trained models (outputs are not a near-uniform average)
    q = 2.0 * torch.randn(batch_size, num_heads, q_len, head_dim)
    k = torch.randn(batch_size, num_heads, kv_len, head_dim)
    v = torch.randn(batch_size, num_heads, kv_len, head_dim)
    return [q, k, v]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "attention"
TAGS = ["llm", "cross-attention"]
SMALL = {"batch_size": 2, "num_heads": 4, "q_len": 64, "kv_len": 192, "head_dim": 32}
HELD_OUT = [{"batch_size": 7, "num_heads": 16, "q_len": 1023, "kv_len": 4099, "head_dim": 64}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "q_len": 37, "kv_len": 101, "head_dim": 24}]
