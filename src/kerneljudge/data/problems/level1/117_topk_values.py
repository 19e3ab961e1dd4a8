"""Top-k (k = 50) largest values of each row of vocabulary logits, sorted descending (top-k sampling)."""
import torch
import torch.nn as nn

batch_size = 4096
vocab = 32768  # in 537 MB, out 0.8 MB; ~1 ms
k = 50


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, logits):
        return torch.topk(logits, self.k, dim=-1, largest=True, sorted=True).values


def get_inputs():
    return [torch.randn(batch_size, vocab)]


def get_init_inputs():
    return [k]


# kerneljudge metadata
CATEGORY = "indexing"
TAGS = ["llm", "topk", "sampling"]
SMALL = {"batch_size": 32, "vocab": 4096, "k": 50}
HELD_OUT = [{"batch_size": 4093, "vocab": 32003, "k": 50}]
HELD_OUT_SMALL = [{"batch_size": 7, "vocab": 1001, "k": 13}]
