"""Per-triplet margin loss: max(0, ||a - p|| - ||a - n|| + margin) with Euclidean distances."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 131072
dim = 1024  # inputs 3 x 537 MB; memory-bound, ~0.8 ms
margin = 1.0


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, reduction="none")


def get_inputs():
    anchor = torch.randn(batch_size, dim)
    # positives and negatives lie at random per-row distances from the anchor, so about half the triplets are active
    positive = anchor + torch.rand(batch_size, 1) * torch.randn(batch_size, dim)
    negative = anchor + torch.rand(batch_size, 1) * torch.randn(batch_size, dim)
    return [anchor, positive, negative]


def get_init_inputs():
    return [margin]


# kerneljudge metadata
CATEGORY = "loss"
TAGS = ["triplet", "metric-learning", "per-sample"]
SMALL = {"batch_size": 256, "dim": 256}
HELD_OUT = [{"batch_size": 131069, "dim": 1023}]
HELD_OUT_SMALL = [{"batch_size": 37, "dim": 199}]
