"""RMSNorm over the hidden dimension (LLaMA style): y = weight * x / sqrt(mean(x^2) + eps), computed in fp32."""
import torch
import torch.nn as nn

tokens = 32768
hidden = 4096  # x 0.5 GiB; eager makes ~3 full-size temporaries: ~3.2 GB moved, ~1.2 ms, peak 2 GiB


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.eps = 1e-6
        self.weight = nn.Parameter(1.0 + 0.3 * torch.randn(hidden))

    def forward(self, x):
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def get_inputs():
    # per-token scale, so the normalisation is not close to an identity
    return [torch.randn(tokens, hidden).mul_(0.25 + 3.0 * torch.rand(tokens, 1))]


def get_init_inputs():
    return [hidden]


# kerneljudge metadata
CATEGORY = "norm"
TAGS = ["llm"]
SMALL = {"tokens": 64, "hidden": 1024}
HELD_OUT = [{"tokens": 30001, "hidden": 4096}, {"tokens": 9999, "hidden": 8190}]
HELD_OUT_SMALL = [{"tokens": 13, "hidden": 1001}]
