"""Log-sum-exp of LLM logits over the vocabulary dimension (the normaliser of the softmax / z-loss)."""
import torch
import torch.nn as nn

tokens = 2048
vocab = 128256  # 1 GiB logits; eager max + (x - max).exp() + sum: ~6.3 GB moved, ~1.8 ms, peak 2 GiB


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits):
        return torch.logsumexp(logits, dim=-1)


def get_inputs():
    # logits with std 3 plus a per-token offset (logsumexp must handle the shift)
    return [torch.randn(tokens, vocab).mul_(3.0).add_(4.0 * torch.randn(tokens, 1))]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "reduction"
TAGS = ["llm"]
SMALL = {"tokens": 8, "vocab": 8192}
HELD_OUT = [{"tokens": 2001, "vocab": 151936}, {"tokens": 5003, "vocab": 50257}]
HELD_OUT_SMALL = [{"tokens": 5, "vocab": 5003}]
