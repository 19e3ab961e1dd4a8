"""Pixel-wise negative log-likelihood for segmentation: log-softmax over classes, then class-weighted NLL per pixel."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
num_classes = 21
height = 512
width = 512  # logits 705 MB, log-probs 705 MB; memory-bound, ~0.6 ms


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.register_buffer("class_weight", torch.linspace(0.5, 1.5, num_classes))

    def forward(self, logits, target):
        log_probs = F.log_softmax(logits, dim=1)
        return F.nll_loss(log_probs, target, weight=self.class_weight, reduction="none")


def get_inputs():
    logits = 2.0 * torch.randn(batch_size, num_classes, height, width)
    target = torch.randint(0, num_classes, (batch_size, height, width))
    return [logits, target]


def get_init_inputs():
    return [num_classes]


# kerneljudge metadata
CATEGORY = "loss"
TAGS = ["nll", "segmentation", "per-sample"]
SMALL = {"batch_size": 2, "num_classes": 21, "height": 64, "width": 64}
HELD_OUT = [{"batch_size": 31, "num_classes": 19, "height": 509, "width": 517}]
HELD_OUT_SMALL = [{"batch_size": 3, "num_classes": 19, "height": 37, "width": 29}]
