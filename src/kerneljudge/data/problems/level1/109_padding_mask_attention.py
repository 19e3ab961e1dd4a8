"""Non-causal attention over padded batches: a boolean key mask (batch, seq) hides each sequence's padding keys."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_heads = 16
seq_len = 2048
head_dim = 64  # ~137 GFLOP dense, ~6 ms; q/k/v/out 67 MB each


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, key_valid):
        # q, k, v: (batch, heads, seq, head_dim); key_valid: (batch, seq) bool, True = real token
        return F.scaled_dot_product_attention(q, k, v, attn_mask=key_valid[:, None, None, :])


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    lengths = torch.randint(seq_len // 4, seq_len + 1, (batch_size, 1))
    key_valid = torch.arange(seq_len)[None, :] < lengths
    # queries scaled by 2: peakier attention, as in trained models (outputs are not a near-uniform average)
    return [2.0 * torch.randn(shape), torch.randn(shape), torch.randn(shape), key_valid]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "attention"
TAGS = ["llm", "mask", "padding", "bool-input"]
SMALL = {"batch_size": 3, "num_heads": 4, "seq_len": 128, "head_dim": 32}
HELD_OUT = [{"batch_size": 7, "num_heads": 12, "seq_len": 2039, "head_dim": 64}]
HELD_OUT_SMALL = [{"batch_size": 3, "num_heads": 3, "seq_len": 91, "head_dim": 24}]
