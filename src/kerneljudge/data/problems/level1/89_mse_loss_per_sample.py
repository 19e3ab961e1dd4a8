"""Per-sample mean squared error: mean over features of (pred - target)^2, one loss per row."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 32768  # inputs 2 x 1.07 GB; memory-bound, ~1 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return F.mse_loss(pred, target, reduction="none").mean(dim=1)


def get_inputs():
    target = torch.randn(batch_size, dim)
    noise_scale = 2.0 * torch.rand(batch_size, 1)  # per-row error level, so losses spread over [0, 4)
    pred = target + noise_scale * torch.randn(batch_size, dim)
    return [pred, target]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "loss"
TAGS = ["mse", "per-sample"]
SMALL = {"batch_size": 64, "dim": 1024}
HELD_OUT = [{"batch_size": 8191, "dim": 32771}]
HELD_OUT_SMALL = [{"batch_size": 37, "dim": 1001}]
