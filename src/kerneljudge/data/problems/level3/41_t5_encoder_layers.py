"""T5-style encoder: two layers of RMSNorm (no mean subtraction), unscaled multi-head attention with bucketed relative
position bias (computed once, shared by the layers), RMSNorm, gated-GELU FFN, residuals, and a final RMSNorm."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
seq_len = 512
d_model = 768
num_heads = 12
d_ff = 2048
num_layers = 2
num_buckets = 32
max_distance = 128   # ~258 GFLOP; ~8.0 ms on an H200 (eager fp32, no TF32); ~0.8 GB peak


class T5Norm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(d))

    def forward(self, x):
        xf = x.float()
        return self.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)


def relative_buckets(t, num_buckets, max_distance, device):
    pos = torch.arange(t, device=device)
    rel = pos[None, :] - pos[:, None]                      # key - query
    half = num_buckets // 2
    bucket = (rel > 0).long() * half
    n = rel.abs()
    exact = half // 2
    far = exact + (torch.log(n.clamp(min=1).float() / exact) / math.log(max_distance / exact) * (half - exact)).long()
    return bucket + torch.where(n < exact, n, far.clamp(max=half - 1))


class Layer(nn.Module):
    def __init__(self, d, h, d_ff):
        super().__init__()
        self.h = h
        hd = d // h
        self.norm1 = T5Norm(d)
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.norm2 = T5Norm(d)
        self.wi0 = nn.Linear(d, d_ff, bias=False)
        self.wi1 = nn.Linear(d, d_ff, bias=False)
        self.wo = nn.Linear(d_ff, d, bias=False)
        for lin in (self.v, self.o, self.wi0, self.wi1, self.wo):   # unit-scale MLP branch
            nn.init.normal_(lin.weight, 0.0, lin.in_features ** -0.5)
        for lin in (self.q, self.k):   # no 1/sqrt(d) in T5 attention: the scale lives in the init
            nn.init.normal_(lin.weight, 0.0, (2.0 / (d * hd ** 0.5)) ** 0.5)

    def forward(self, x, bias):
        b, t, d = x.shape
        h = self.norm1(x)
        q, k, v = (lin(h).view(b, t, self.h, -1).transpose(1, 2) for lin in (self.q, self.k, self.v))
        att = torch.softmax(q @ k.transpose(-2, -1) + bias, dim=-1)
        x = x + self.o((att @ v).transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.wo(F.gelu(self.wi0(h), approximate="tanh") * self.wi1(h))


class Model(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, num_layers, num_buckets, max_distance):
        super().__init__()
        self.num_buckets, self.max_distance = num_buckets, max_distance
        self.rel_bias = nn.Embedding(num_buckets, num_heads)
        self.layers = nn.ModuleList([Layer(d_model, num_heads, d_ff) for _ in range(num_layers)])
        self.final_norm = T5Norm(d_model)

    def forward(self, x):
        buckets = relative_buckets(x.shape[1], self.num_buckets, self.max_distance, x.device)
        bias = self.rel_bias(buckets).permute(2, 0, 1)     # (heads, T, T)
        for layer in self.layers:
            x = layer(x, bias)
        return self.final_norm(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads, d_ff, num_layers, num_buckets, max_distance]


CATEGORY = "transformer"
TAGS = ["llm", "t5", "encoder", "attention", "relative-position-bias", "rmsnorm", "geglu"]
SMALL = {"batch_size": 2, "seq_len": 40, "d_model": 64, "num_heads": 4, "d_ff": 128, "num_buckets": 16, "max_distance": 32}
HELD_OUT = [{"batch_size": 9, "seq_len": 613, "d_ff": 2000}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 29, "d_model": 48, "num_heads": 3, "d_ff": 100, "num_buckets": 16,
                   "max_distance": 20}]
# low precision: the reference itself is off fp32 by bf16 0.01 rel_l2, 0.05 elementwise; fp16 0.005 rel_l2, 0.02 elementwise
TOLERANCE = {"bf16": {"atol": 0.1, "rtol": 0.1, "rel_l2": 0.02}, "fp16": {"atol": 0.05, "rtol": 0.05, "rel_l2": 0.01}}
