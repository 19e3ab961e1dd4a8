"""Softmax over the key dimension of attention scores (batch, heads, queries, keys)."""
import torch
import torch.nn as nn

batch_size = 3
num_heads = 32
q_len = 2048
k_len = 2048  # 1.5 GiB in + out: ~3.2 GB moved, ~0.92 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores):
        return torch.softmax(scores, dim=-1)


def get_inputs():
    return [2.0 * torch.randn(batch_size, num_heads, q_len, k_len)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "reduction"
TAGS = ["llm", "softmax"]
SMALL = {"batch_size": 1, "num_heads": 4, "q_len": 32, "k_len": 256}
HELD_OUT = [{"batch_size": 2, "num_heads": 40, "q_len": 2001, "k_len": 2001}, {"batch_size": 1, "num_heads": 28, "q_len": 1024, "k_len": 8193}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "q_len": 17, "k_len": 301}]
