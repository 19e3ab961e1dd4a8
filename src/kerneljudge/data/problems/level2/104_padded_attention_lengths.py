"""Batched attention over right-padded sequences: key padding mask from int64 lengths, softmax, values, zeroed padded queries."""
import torch
import torch.nn as nn

batch_size = 8
num_heads = 16
seq_len = 1024
head_dim = 64  # ~34 GFLOP, 537 MB score tensors, ~1.5 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, lengths):
        s, d = q.shape[2], q.shape[3]
        valid = torch.arange(s, device=q.device)[None, :] < lengths[:, None]  # (batch, seq)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (d ** -0.5)
        scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return out * valid[:, None, :, None].to(out.dtype)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    lengths = torch.randint(seq_len // 2, seq_len + 1, (batch_size,))
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape), lengths]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = ["llm"]
SMALL = {"batch_size": 3, "num_heads": 2, "seq_len": 16, "head_dim": 16}
HELD_OUT = [{"batch_size": 7, "num_heads": 12, "seq_len": 1021, "head_dim": 80}]
HELD_OUT_SMALL = [{"batch_size": 2, "num_heads": 3, "seq_len": 13, "head_dim": 12}]
