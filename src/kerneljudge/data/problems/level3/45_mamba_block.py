"""Mamba (S6) residual block: RMSNorm, input projection to x and gate z, depthwise causal conv + SiLU, input-dependent
dt/B/C, selective scan over time (a loop over the sequence, state kept in fp32), D skip, SiLU(z) gating, out projection."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 256
d_model = 1024
d_state = 16
d_conv = 4
expand = 2           # ~27 GFLOP; ~18.3 ms on an H200 (eager fp32, no TF32); ~0.8 GB peak


class Model(nn.Module):
    def __init__(self, d_model, d_state, d_conv, expand):
        super().__init__()
        e = expand * d_model
        self.dt_rank = math.ceil(d_model / 16)
        self.norm_weight = nn.Parameter(1.0 + 0.1 * torch.randn(d_model))
        self.in_proj = nn.Linear(d_model, 2 * e, bias=False)
        self.conv = nn.Conv1d(e, e, d_conv, groups=e, padding=d_conv - 1)
        self.x_proj = nn.Linear(e, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, e)
        dt = torch.exp(torch.rand(e) * (math.log(0.5) - math.log(0.01)) + math.log(0.01))
        with torch.no_grad():
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))   # softplus^-1: dt in [0.01, 0.5]
        self.A_log = nn.Parameter(torch.log(torch.arange(1, d_state + 1, dtype=torch.float32)).repeat(e, 1))
        self.D = nn.Parameter(torch.ones(e))
        self.out_proj = nn.Linear(e, d_model, bias=False)
        for lin in (self.in_proj, self.x_proj, self.out_proj):   # unit-scale signals so the scan matters
            nn.init.normal_(lin.weight, 0.0, lin.in_features ** -0.5)
        nn.init.normal_(self.conv.weight, 0.0, d_conv ** -0.5)

    def forward(self, x):
        b, t, _ = x.shape
        xf = x.float()
        h = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * self.norm_weight
        u, z = self.in_proj(h).chunk(2, dim=-1)
        u = F.silu(self.conv(u.transpose(1, 2))[..., :t]).transpose(1, 2)          # (B, T, E), causal
        dt, Bm, Cm = self.x_proj(u).split([self.dt_rank, self.A_log.shape[1], self.A_log.shape[1]], dim=-1)
        dt = F.softplus(self.dt_proj(dt)).float()                                   # (B, T, E)
        A = -torch.exp(self.A_log.float())                                           # (E, N)
        dA = torch.exp(dt.unsqueeze(-1) * A)                                         # (B, T, E, N)
        dBu = (dt * u.float()).unsqueeze(-1) * Bm.float().unsqueeze(2)               # (B, T, E, N)
        Cf = Cm.float()
        state = torch.zeros(b, u.shape[-1], A.shape[1], device=x.device, dtype=torch.float32)
        ys = []
        for i in range(t):                                                          # selective scan
            state = dA[:, i] * state + dBu[:, i]
            ys.append((state * Cf[:, i].unsqueeze(1)).sum(-1))
        y = torch.stack(ys, dim=1).to(x.dtype) + u * self.D
        return x + self.out_proj(y * F.silu(z))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, d_state, d_conv, expand]


CATEGORY = "ssm"
TAGS = ["llm", "mamba", "selective-scan", "scan", "time-loop", "conv1d", "gating"]
SMALL = {"batch_size": 2, "seq_len": 24, "d_model": 32, "d_state": 8}
HELD_OUT = [{"batch_size": 5, "seq_len": 203, "d_model": 1000}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 17, "d_model": 40, "d_state": 6, "d_conv": 3}]
# low precision: the reference itself is off fp32 by fp16 0.002 rel_l2, 0.01 elementwise
TOLERANCE = {"fp16": {"atol": 0.03, "rtol": 0.03, "rel_l2": 0.004}}
