"""Product reduction over a small middle dimension (32 factors close to 1)."""
import torch
import torch.nn as nn

batch_size = 10240
dim = 32
inner = 2048  # 2.5 GiB read once, 80 MiB out: ~2.8 GB moved, ~0.92 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.prod(x, dim=1)


def get_inputs():
    # factors 1 + 0.2 * N(0, 1): products stay in a safe range (log-std ~1.1) in fp16/bf16
    return [torch.randn(batch_size, dim, inner).mul_(0.2).add_(1.0)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "reduction"
TAGS = []
SMALL = {"batch_size": 64, "dim": 32, "inner": 128}
HELD_OUT = [{"batch_size": 9001, "dim": 31, "inner": 2049}]
HELD_OUT_SMALL = [{"batch_size": 13, "dim": 17, "inner": 101}]
