"""Per-token cross-entropy with label smoothing 0.1 and ignore_index -100 (padding tokens get loss 0)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 8192
vocab = 32000  # logits 1.05 GB; log-softmax intermediate 1.05 GB; ~1 ms
smoothing = 0.1


class Model(nn.Module):
    def __init__(self, smoothing):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits, targets):
        # computed in fp32: the smoothing term sums log-probs over the whole vocabulary, which overflows fp16
        loss = F.cross_entropy(
            logits.float(), targets, ignore_index=-100, label_smoothing=self.smoothing, reduction="none"
        )
        return loss.to(logits.dtype)


def get_inputs():
    logits = 2.0 * torch.randn(num_tokens, vocab)
    targets = torch.randint(0, vocab, (num_tokens,))
    targets = torch.where(torch.rand(num_tokens) < 0.1, torch.full_like(targets, -100), targets)  # ~10% padding
    return [logits, targets]


def get_init_inputs():
    return [smoothing]


# kerneljudge metadata
CATEGORY = "loss"
TAGS = ["llm", "cross-entropy", "label-smoothing", "per-sample"]
SMALL = {"num_tokens": 64, "vocab": 1000}
HELD_OUT = [{"num_tokens": 8179, "vocab": 32001}]
HELD_OUT_SMALL = [{"num_tokens": 37, "vocab": 1001}]
