"""Causal linear-attention layer (elu+1 feature map): prefix sums of key-value outer products and of keys replace the
softmax (prefix sums kept in fp32); LayerNorm in front and an output projection, no residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 1024
d_model = 512
num_heads = 8        # memory bound: ~18 GFLOP; ~3.7 ms on an H200 (eager fp32, no TF32); ~3.4 GB peak


class Model(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.norm = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        nn.init.normal_(self.qkv.weight, 0.0, d_model ** -0.5)
        nn.init.normal_(self.out.weight, 0.0, d_model ** -0.5)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        q, k, v = (F.elu(q) + 1).float(), (F.elu(k) + 1).float(), v.float()   # positive feature map; fp32 sums
        kv = torch.cumsum(k.unsqueeze(-1) * v.unsqueeze(-2), dim=2)  # (B, H, T, hd, hd) running sum of k v^T
        num = (q.unsqueeze(-2) @ kv).squeeze(-2)                     # (B, H, T, hd)
        den = (q * torch.cumsum(k, dim=2)).sum(-1, keepdim=True)
        y = (num / den).to(x.dtype).transpose(1, 2).reshape(b, t, d)
        return self.out(y)


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads]


CATEGORY = "transformer"
TAGS = ["llm", "linear-attention", "causal", "scan", "cumsum", "layernorm"]
SMALL = {"batch_size": 2, "seq_len": 48, "d_model": 64, "num_heads": 4}
HELD_OUT = [{"batch_size": 5, "seq_len": 1111, "d_model": 480, "num_heads": 6}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 37, "d_model": 48, "num_heads": 3}]
# low precision: the reference itself is off fp32 by bf16 0.004 rel_l2, 0.09 elementwise; fp16 0.002 rel_l2, 0.08 elementwise
TOLERANCE = {"bf16": {"atol": 0.2, "rtol": 0.2, "rel_l2": 0.02}, "fp16": {"atol": 0.2, "rtol": 0.2, "rel_l2": 0.005}}
