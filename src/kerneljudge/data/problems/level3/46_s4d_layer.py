"""S4D-style layer: diagonal real state-space kernel K[h, l] = sum_n C (exp(dt A) - 1) / A exp(dt A l) materialised over
the sequence, long causal convolution via FFT (fp32), D skip, GELU, GLU output projection, pre-LayerNorm and residual."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
seq_len = 4096
d_model = 512
d_state = 64         # ~69 GFLOP; ~5.2 ms on an H200 (eager fp32, no TF32); ~1.5 GB peak


class Model(nn.Module):
    def __init__(self, d_model, d_state):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.log_dt = nn.Parameter(torch.rand(d_model) * (math.log(0.5) - math.log(0.005)) + math.log(0.005))
        self.log_A = nn.Parameter(torch.log(0.5 * torch.arange(1, d_state + 1, dtype=torch.float32)).repeat(d_model, 1))
        self.C = nn.Parameter(torch.randn(d_model, d_state))
        self.D = nn.Parameter(0.5 * torch.randn(d_model))
        self.out = nn.Linear(d_model, 2 * d_model)
        nn.init.normal_(self.out.weight, 0.0, 2.0 * d_model ** -0.5)

    def forward(self, x):
        b, t, h = x.shape
        u = self.norm(x).transpose(1, 2).float()                     # (B, H, T)
        dtA = torch.exp(self.log_dt.float())[:, None] * -torch.exp(self.log_A.float())   # (H, N), negative
        coef = self.C.float() * torch.expm1(dtA) / (dtA / torch.exp(self.log_dt.float())[:, None])
        pos = torch.arange(t, device=x.device, dtype=torch.float32)
        K = (coef.unsqueeze(-1) * torch.exp(dtA.unsqueeze(-1) * pos)).sum(1)   # (H, T)
        n = 2 * t
        y = torch.fft.irfft(torch.fft.rfft(u, n=n) * torch.fft.rfft(K, n=n), n=n)[..., :t]
        y = (y + u * self.D.float()[:, None]).to(x.dtype).transpose(1, 2)
        return x + F.glu(self.out(F.gelu(y)), dim=-1)


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, d_state]


CATEGORY = "ssm"
TAGS = ["s4", "state-space", "fft", "long-convolution", "layernorm", "glu"]
SMALL = {"batch_size": 2, "seq_len": 64, "d_model": 32, "d_state": 8}
HELD_OUT = [{"batch_size": 7, "seq_len": 3001, "d_model": 500}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 45, "d_model": 24, "d_state": 5}]
# low precision: the reference itself is off fp32 by bf16 0.004 rel_l2, 0.03 elementwise; fp16 0.002 rel_l2, 0.02 elementwise
TOLERANCE = {"bf16": {"atol": 0.06, "rtol": 0.06, "rel_l2": 0.02}, "fp16": {"atol": 0.04, "rtol": 0.04, "rel_l2": 0.005}}
