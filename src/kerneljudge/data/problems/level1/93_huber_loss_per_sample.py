"""Per-sample Huber (smooth L1) loss with delta 1.0, averaged over features: one loss per row."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 32768  # inputs 2 x 1.07 GB; memory-bound, ~1 ms
delta = 1.0


class Model(nn.Module):
    def __init__(self, delta):
        super().__init__()
        self.delta = delta

    def forward(self, pred, target):
        return F.huber_loss(pred, target, reduction="none", delta=self.delta).mean(dim=1)


def get_inputs():
    target = torch.randn(batch_size, dim)
    noise_scale = 3.0 * torch.rand(batch_size, 1)  # per-row error level: both the quadratic and linear branches occur
    pred = target + noise_scale * torch.randn(batch_size, dim)
    return [pred, target]


def get_init_inputs():
    return [delta]


# kerneljudge metadata
CATEGORY = "loss"
TAGS = ["huber", "smooth-l1", "per-sample"]
SMALL = {"batch_size": 64, "dim": 1024}
HELD_OUT = [{"batch_size": 8179, "dim": 32779}]
HELD_OUT_SMALL = [{"batch_size": 37, "dim": 1003}]
