"""Causal attention with ALiBi: scaled scores plus per-head linear distance biases, causal mask, softmax, values."""
import torch
import torch.nn as nn

batch_size = 4
num_heads = 16
seq_len = 1024
head_dim = 128  # ~34 GFLOP, 268 MB score tensors, ~2 ms


class Model(nn.Module):
    def __init__(self, num_heads):
        super().__init__()
        self.register_buffer("slopes", 2.0 ** (-8.0 * torch.arange(1, num_heads + 1).float() / num_heads))

    def forward(self, q, k, v):
        s, d = q.shape[2], q.shape[3]
        pos = torch.arange(s, device=q.device, dtype=torch.float32)
        rel = pos[None, :] - pos[:, None]  # j - i, <= 0 where visible
        bias = (self.slopes.float()[:, None, None] * rel).to(q.dtype)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (d ** -0.5) + bias
        scores = scores.masked_fill(rel > 0, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [num_heads]


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = ["llm"]
SMALL = {"batch_size": 2, "num_heads": 4, "seq_len": 16, "head_dim": 16}
HELD_OUT = [{"batch_size": 3, "num_heads": 12, "seq_len": 1021, "head_dim": 80}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "seq_len": 13, "head_dim": 12}]
