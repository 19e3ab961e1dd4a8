"""Softmax with temperature 0.7 over long vocabulary-sized rows (sampling distribution from LM logits)."""
import torch
import torch.nn as nn

batch_size = 1536
vocab = 131072  # in/out 805 MB each (+805 MB scaled copy in eager); ~1.2 ms
temperature = 0.7


class Model(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, logits):
        return torch.softmax(logits / self.temperature, dim=-1)


def get_inputs():
    return [3.0 * torch.randn(batch_size, vocab)]


def get_init_inputs():
    return [temperature]


# kerneljudge metadata
CATEGORY = "softmax"
TAGS = ["llm", "sampling", "long-rows"]
SMALL = {"batch_size": 16, "vocab": 8192}
HELD_OUT = [{"batch_size": 1531, "vocab": 128256 + 1}]
HELD_OUT_SMALL = [{"batch_size": 5, "vocab": 5003}]
