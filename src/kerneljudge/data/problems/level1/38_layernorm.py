"""LayerNorm over the last (hidden) dimension with a learned elementwise affine (weight, bias)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 40
seq_len = 1024
hidden = 8192  # 1.25 GiB in + out; stats pass + normalise pass: ~4 GB moved, ~1.2 ms


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.eps = 1e-5
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(hidden))
        self.bias = nn.Parameter(0.5 * torch.randn(hidden))

    def forward(self, x):
        return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)


def get_inputs():
    # per-token scale and offset, so normalising really changes the values
    scale = 0.5 + 2.0 * torch.rand(batch_size, seq_len, 1)
    shift = torch.randn(batch_size, seq_len, 1)
    return [torch.randn(batch_size, seq_len, hidden).mul_(scale).add_(shift)]


def get_init_inputs():
    return [hidden]


# kerneljudge metadata
CATEGORY = "norm"
TAGS = []
SMALL = {"batch_size": 2, "seq_len": 16, "hidden": 1024}
HELD_OUT = [{"batch_size": 37, "seq_len": 1001, "hidden": 8190}, {"batch_size": 5, "seq_len": 4099, "hidden": 12289}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 7, "hidden": 1001}]
