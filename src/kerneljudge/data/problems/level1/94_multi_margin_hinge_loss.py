"""Multi-class hinge loss (margin 1) per sample: mean over wrong classes of max(0, 1 - x[y] + x[j])."""
import torch
import torch.nn as nn

batch_size = 65536
num_classes = 4096  # scores 1.07 GB + 2 intermediates; memory-bound, ~1 ms
margin = 1.0


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, scores, target):
        # same values as F.multi_margin_loss(scores, target, margin, reduction="none") (p=1, no weights)
        correct = scores.gather(1, target[:, None])
        hinge = (self.margin - correct + scores).clamp_min(0.0)
        hinge = hinge.scatter(1, target[:, None], 0.0)  # the true class does not count
        return hinge.sum(dim=1) / scores.shape[1]


def get_inputs():
    scores = torch.randn(batch_size, num_classes)
    target = torch.randint(0, num_classes, (batch_size,))
    return [scores, target]


def get_init_inputs():
    return [margin]


# kerneljudge metadata
CATEGORY = "loss"
TAGS = ["hinge", "per-sample"]
SMALL = {"batch_size": 256, "num_classes": 100}
HELD_OUT = [{"batch_size": 65533, "num_classes": 4099}]
HELD_OUT_SMALL = [{"batch_size": 37, "num_classes": 101}]
