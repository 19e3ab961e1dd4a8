"""Single-head scaled dot-product attention written as bmm, scale, softmax, bmm (no mask)."""
import torch
import torch.nn as nn

batch_size = 64
seq_len = 1024
head_dim = 128  # 2 x ~17 GFLOP bmm + softmax over 268 MB scores, ~1.5 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scores = torch.bmm(q, k.transpose(1, 2)) * (q.shape[-1] ** -0.5)
        return torch.bmm(torch.softmax(scores, dim=-1), v)


def get_inputs():
    shape = (batch_size, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "fusion-attention"
TAGS = []
SMALL = {"batch_size": 3, "seq_len": 32, "head_dim": 16}
HELD_OUT = [{"batch_size": 61, "seq_len": 1021, "head_dim": 96}]
HELD_OUT_SMALL = [{"batch_size": 2, "seq_len": 19, "head_dim": 12}]
