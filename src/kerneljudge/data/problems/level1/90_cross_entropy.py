"""Per-token cross-entropy loss of logits against int64 class targets (reduction='none')."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 8192
num_classes = 32000  # logits 1.05 GB; log-softmax intermediate 1.05 GB; ~0.8 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        return F.cross_entropy(logits, targets, reduction="none")


def get_inputs():
    logits = 2.0 * torch.randn(num_tokens, num_classes)
    targets = torch.randint(0, num_classes, (num_tokens,))
    return [logits, targets]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "loss"
TAGS = ["llm", "cross-entropy", "per-sample"]
SMALL = {"num_tokens": 64, "num_classes": 1000}
HELD_OUT = [{"num_tokens": 8191, "num_classes": 32003}]
HELD_OUT_SMALL = [{"num_tokens": 37, "num_classes": 999}]
