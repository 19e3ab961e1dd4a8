"""RWKV-6-style time mixing: token shift with learned mixes, receptance/key/value/gate projections, data-dependent
per-channel decay (LoRA), a per-head matrix-state recurrence looped over time (fp32 state) with a bonus for the current
token, per-head GroupNorm, SiLU gate and output projection, pre-LayerNorm and residual."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 160
d_model = 1024
head_size = 64
decay_rank = 64      # ~14 GFLOP; ~27.4 ms on an H200 (eager fp32, no TF32); ~0.5 GB peak


class Model(nn.Module):
    def __init__(self, d_model, head_size, decay_rank):
        super().__init__()
        self.h, self.hs = d_model // head_size, head_size
        self.ln = nn.LayerNorm(d_model)
        self.mix = nn.Parameter(torch.rand(5, d_model))              # token-shift mixes for r, k, v, w, g
        self.r = nn.Linear(d_model, d_model, bias=False)
        self.k = nn.Linear(d_model, d_model, bias=False)
        self.v = nn.Linear(d_model, d_model, bias=False)
        self.g = nn.Linear(d_model, d_model, bias=False)
        decay = 0.7 + 0.299 * torch.rand(d_model)                    # base decay per channel in (0.7, 0.999)
        self.w0 = nn.Parameter(torch.log(-torch.log(decay)))
        self.w_a = nn.Parameter(torch.randn(d_model, decay_rank) / math.sqrt(d_model))
        self.w_b = nn.Parameter(0.1 * torch.randn(decay_rank, d_model))
        self.u = nn.Parameter(0.5 * torch.randn(self.h, head_size))  # bonus for the current token
        self.gn = nn.GroupNorm(self.h, d_model, eps=64e-5)
        self.o = nn.Linear(d_model, d_model, bias=False)
        for lin in (self.r, self.k, self.v, self.g, self.o):
            nn.init.normal_(lin.weight, 0.0, d_model ** -0.5)

    def forward(self, x):
        b, t, d = x.shape
        h = self.ln(x)
        prev = F.pad(h, (0, 0, 1, -1))                                # token shift
        xr, xk, xv, xw, xg = (h + (prev - h) * m for m in self.mix)
        r = self.r(xr).view(b, t, self.h, self.hs).float()
        k = self.k(xk).view(b, t, self.h, self.hs).float() / math.sqrt(self.hs)
        v = self.v(xv).view(b, t, self.h, self.hs).float()
        g = F.silu(self.g(xg))
        w = torch.exp(-torch.exp((self.w0 + torch.tanh(xw @ self.w_a) @ self.w_b).float())).view(b, t, self.h, self.hs)
        u = self.u.float().unsqueeze(-1)
        state = torch.zeros(b, self.h, self.hs, self.hs, device=x.device, dtype=torch.float32)
        ys = []
        for i in range(t):
            kv = k[:, i].unsqueeze(-1) * v[:, i].unsqueeze(-2)       # (B, H, hs, hs) outer product
            ys.append((r[:, i].unsqueeze(-2) @ (state + u * kv)).squeeze(-2))
            state = w[:, i].unsqueeze(-1) * state + kv
        y = torch.stack(ys, dim=1).reshape(b * t, d).to(x.dtype)
        y = self.gn(y).view(b, t, d)
        return x + self.o(y * g)


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, head_size, decay_rank]


CATEGORY = "ssm"
TAGS = ["llm", "rwkv", "linear-attention", "recurrence", "time-loop", "data-dependent-decay", "groupnorm"]
SMALL = {"batch_size": 2, "seq_len": 24, "d_model": 64, "head_size": 16, "decay_rank": 8}
HELD_OUT = [{"batch_size": 5, "seq_len": 149, "d_model": 960}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 17, "d_model": 48, "head_size": 12, "decay_rank": 6}]
# low precision: the reference itself is off fp32 by bf16 0.005 rel_l2, 0.04 elementwise; fp16 0.002 rel_l2, 0.02 elementwise
TOLERANCE = {"bf16": {"atol": 0.08, "rtol": 0.08, "rel_l2": 0.02}, "fp16": {"atol": 0.04, "rtol": 0.04, "rel_l2": 0.005}}
