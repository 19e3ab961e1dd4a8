"""Log-softmax of LLM logits over the vocabulary dimension (token log-probabilities)."""
import torch
import torch.nn as nn

tokens = 2048
vocab = 128256  # 1 GiB in + out; max/sum pass + write pass: ~3.2 GB moved, ~1.1 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits):
        return torch.log_softmax(logits, dim=-1)


def get_inputs():
    return [3.0 * torch.randn(tokens, vocab)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "reduction"
TAGS = ["llm", "softmax"]
SMALL = {"tokens": 8, "vocab": 8192}
HELD_OUT = [{"tokens": 2001, "vocab": 151936}, {"tokens": 5003, "vocab": 50257}]
HELD_OUT_SMALL = [{"tokens": 5, "vocab": 5003}]
