"""Griffin/Hawk recurrent block: GELU gate branch, and a branch of linear projection, depthwise causal conv and the
real-gated linear recurrent unit (RG-LRU: gated decay a^(c r_t), normalised input, loop over time in fp32); the branches
are multiplied and projected back, with pre-RMSNorm and residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 512
d_model = 1024
lru_width = 1536
d_conv = 4           # ~77 GFLOP; ~15.2 ms on an H200 (eager fp32, no TF32); ~0.5 GB peak


class Model(nn.Module):
    def __init__(self, d_model, lru_width, d_conv):
        super().__init__()
        self.norm_weight = nn.Parameter(1.0 + 0.1 * torch.randn(d_model))
        self.gate_proj = nn.Linear(d_model, lru_width)
        self.in_proj = nn.Linear(d_model, lru_width)
        self.conv = nn.Conv1d(lru_width, lru_width, d_conv, groups=lru_width, padding=d_conv - 1)
        self.rec_gate = nn.Linear(lru_width, lru_width)     # r_t
        self.inp_gate = nn.Linear(lru_width, lru_width)     # i_t
        a = 0.9 + 0.099 * torch.rand(lru_width)              # a = sigmoid(lam) in (0.9, 0.999)
        self.lam = nn.Parameter(torch.log(a / (1 - a)))
        self.out_proj = nn.Linear(lru_width, d_model)
        for lin in (self.gate_proj, self.in_proj, self.rec_gate, self.inp_gate, self.out_proj):
            nn.init.normal_(lin.weight, 0.0, lin.in_features ** -0.5)
        nn.init.normal_(self.conv.weight, 0.0, d_conv ** -0.5)

    def forward(self, x):
        b, t, _ = x.shape
        xf = x.float()
        h = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * self.norm_weight
        gate = F.gelu(self.gate_proj(h), approximate="tanh")
        u = self.conv(self.in_proj(h).transpose(1, 2))[..., :t].transpose(1, 2)     # causal depthwise conv
        r = torch.sigmoid(self.rec_gate(u)).float()
        i = torch.sigmoid(self.inp_gate(u)).float()
        log_a = -8.0 * r * F.softplus(-self.lam.float())                            # log(a^(8 r_t))
        a = torch.exp(log_a)
        inp = torch.sqrt(-torch.expm1(2.0 * log_a)) * (i * u.float())              # sqrt(1 - a_t^2) * (i_t * u_t)
        state = torch.zeros(b, u.shape[-1], device=x.device, dtype=torch.float32)
        ys = []
        for k in range(t):
            state = a[:, k] * state + inp[:, k]
            ys.append(state)
        y = torch.stack(ys, dim=1).to(x.dtype)
        return x + self.out_proj(y * gate)


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, lru_width, d_conv]


CATEGORY = "ssm"
TAGS = ["llm", "griffin", "rg-lru", "linear-recurrence", "scan", "time-loop", "conv1d", "gating"]
SMALL = {"batch_size": 2, "seq_len": 32, "d_model": 32, "lru_width": 48}
HELD_OUT = [{"batch_size": 5, "seq_len": 389, "lru_width": 1500}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 21, "d_model": 40, "lru_width": 36, "d_conv": 3}]
# low precision: the reference itself is off fp32 by fp16 0.002 rel_l2, 0.01 elementwise
TOLERANCE = {"fp16": {"atol": 0.03, "rtol": 0.03, "rel_l2": 0.005}}
