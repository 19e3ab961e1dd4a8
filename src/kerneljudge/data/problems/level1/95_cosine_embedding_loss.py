"""Per-pair cosine embedding loss: 1 - cos(x1, x2) for similar pairs (y=1), max(0, cos - margin) for dissimilar (y=-1)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 131072
dim = 1024  # inputs 2 x 537 MB; memory-bound, ~0.5 ms
margin = 0.2


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, x1, x2, y):
        # same values as F.cosine_embedding_loss(..., reduction="none"), whose fp16 form overflows |x1|^2 * |x2|^2
        cos = F.cosine_similarity(x1, x2, dim=1)
        return torch.where(y == 1, 1.0 - cos, (cos - self.margin).clamp_min(0.0))


def get_inputs():
    x1 = torch.randn(batch_size, dim)
    # x2 shares a random-strength (possibly negative) component with x1, so cosines spread over (-1, 1)
    x2 = torch.randn(batch_size, 1) * x1 + torch.randn(batch_size, dim)
    y = 2 * torch.randint(0, 2, (batch_size,)) - 1  # int64 labels in {-1, 1}
    return [x1, x2, y]


def get_init_inputs():
    return [margin]


# kerneljudge metadata
CATEGORY = "loss"
TAGS = ["cosine-embedding", "per-sample"]
SMALL = {"batch_size": 256, "dim": 256}
HELD_OUT = [{"batch_size": 131071, "dim": 1021}]
HELD_OUT_SMALL = [{"batch_size": 37, "dim": 201}]
