"""Causal attention with tanh logit soft-capping (Gemma-2 style): scores = cap * tanh(q k^T / sqrt(d) / cap)."""
import torch
import torch.nn as nn

batch_size = 2
num_heads = 16
seq_len = 2048
head_dim = 128  # ~69 GFLOP dense, ~4 ms; eager keeps ~4 score-sized (268 MB) tensors alive
softcap = 5.0


class Model(nn.Module):
    def __init__(self, softcap):
        super().__init__()
        self.softcap = softcap

    def forward(self, q, k, v):
        # q, k, v: (batch, heads, seq, head_dim)
        s, d = q.shape[2], q.shape[3]
        scores = torch.matmul(q, k.transpose(-1, -2)) * d ** -0.5
        scores = self.softcap * torch.tanh(scores / self.softcap)
        future = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    # larger query scale so some scores reach the soft cap
    return [2.0 * torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [softcap]


# kerneljudge metadata
CATEGORY = "attention"
TAGS = ["llm", "softcap", "causal"]
SMALL = {"batch_size": 2, "num_heads": 4, "seq_len": 128, "head_dim": 32}
HELD_OUT = [{"batch_size": 3, "num_heads": 8, "seq_len": 2045, "head_dim": 128}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "seq_len": 91, "head_dim": 40}]
