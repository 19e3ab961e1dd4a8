"""Fused LM-head cross-entropy: hidden states x output embedding -> vocabulary logits -> per-token CE against int64 targets."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 2048
hidden = 2048
vocab = 128256  # ~1.08 TFLOP, ~22 ms; weight 1.05 GB, logits 1.05 GB, log-softmax 1.05 GB


class Model(nn.Module):
    def __init__(self, hidden, vocab):
        super().__init__()
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        nn.init.normal_(self.lm_head.weight, std=2.0 / hidden ** 0.5)  # logits with std ~2, as in a trained LM

    def forward(self, hidden_states, targets):
        logits = self.lm_head(hidden_states)
        return F.cross_entropy(logits, targets, reduction="none")


def get_inputs():
    return [torch.randn(num_tokens, hidden), torch.randint(0, vocab, (num_tokens,))]


def get_init_inputs():
    return [hidden, vocab]


# kerneljudge metadata
CATEGORY = "loss"
TAGS = ["llm", "cross-entropy", "lm-head", "fused"]
SMALL = {"num_tokens": 32, "hidden": 128, "vocab": 4096}
HELD_OUT = [{"num_tokens": 2047, "hidden": 2056, "vocab": 128000 + 13}]
HELD_OUT_SMALL = [{"num_tokens": 19, "hidden": 120, "vocab": 4099}]
