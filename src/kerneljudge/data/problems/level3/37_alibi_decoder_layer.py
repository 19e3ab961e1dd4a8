"""BLOOM-style decoder layer: LayerNorm, causal multi-head attention with ALiBi linear position biases (per-head slopes,
no position embeddings), LayerNorm, GELU MLP, residuals."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 1024
hidden = 1024
num_heads = 16       # ~241 GFLOP; ~7.2 ms on an H200 (eager fp32, no TF32); ~2.0 GB peak


def alibi_slopes(n):
    p = 2 ** math.floor(math.log2(n))
    base = [2.0 ** (-8.0 * (i + 1) / p) for i in range(p)]
    extra = [2.0 ** (-4.0 * (2 * i + 1) / p) for i in range(n - p)]   # interleaved slopes for non-power-of-2 counts
    return torch.tensor(base + extra)


class Model(nn.Module):
    def __init__(self, hidden, num_heads):
        super().__init__()
        self.h = num_heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.dense = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, 4 * hidden)
        self.fc2 = nn.Linear(4 * hidden, hidden)
        nn.init.normal_(self.qkv.weight, 0.0, (2.0 / hidden) ** 0.5)
        self.register_buffer("slopes", alibi_slopes(num_heads), persistent=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        i = torch.arange(t, device=x.device)
        rel = i[None, :] - i[:, None]                                # j - i <= 0 on the visible part
        bias = (self.slopes.float().view(-1, 1, 1) * rel).to(x.dtype)
        s = q @ k.transpose(-2, -1) / math.sqrt(d // self.h) + bias
        att = torch.softmax(s.masked_fill(rel > 0, float("-inf")), dim=-1)
        x = x + self.dense((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden, num_heads]


CATEGORY = "transformer"
TAGS = ["llm", "bloom", "alibi", "attention", "causal", "layernorm", "gelu"]
SMALL = {"batch_size": 2, "seq_len": 32, "hidden": 64, "num_heads": 4}
HELD_OUT = [{"batch_size": 5, "seq_len": 1001, "hidden": 960, "num_heads": 12}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 27, "hidden": 72, "num_heads": 6}]
# low precision: the reference itself is off fp32 by bf16 0.004 rel_l2, 0.02 elementwise; fp16 0.001 rel_l2, 0.008 elementwise
TOLERANCE = {"bf16": {"atol": 0.05, "rtol": 0.05, "rel_l2": 0.02}, "fp16": {"atol": 0.02, "rtol": 0.02, "rel_l2": 0.003}}
