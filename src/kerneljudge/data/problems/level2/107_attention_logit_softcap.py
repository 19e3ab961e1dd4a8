"""Causal attention with tanh soft-capping of the attention logits (cap * tanh(scores / cap)) before the mask and softmax."""
import torch
import torch.nn as nn

batch_size = 4
num_heads = 16
seq_len = 1024
head_dim = 128  # ~34 GFLOP, 268 MB score tensors, ~2 ms
softcap = 8.0


class Model(nn.Module):
    def __init__(self, softcap):
        super().__init__()
        self.softcap = softcap

    def forward(self, q, k, v):
        s, d = q.shape[2], q.shape[3]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (d ** -0.5)
        scores = self.softcap * torch.tanh(scores / self.softcap)
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [3.0 * torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [softcap]


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = ["llm"]
SMALL = {"batch_size": 2, "num_heads": 2, "seq_len": 16, "head_dim": 16}
HELD_OUT = [{"batch_size": 3, "num_heads": 12, "seq_len": 1021, "head_dim": 80}]
HELD_OUT_SMALL = [{"batch_size": 1, "num_heads": 3, "seq_len": 13, "head_dim": 12}]
