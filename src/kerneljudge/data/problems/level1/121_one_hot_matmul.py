"""One-hot encode int64 ids, then multiply by a weight matrix: one_hot(ids, V) @ W (an embedding lookup in disguise)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_ids = 8192
num_classes = 16384
dim = 1024  # ~275 GFLOP as a dense matmul, ~6 ms; one-hot 1.07 GB (int64) + 537 MB (float), W 67 MB


class Model(nn.Module):
    def __init__(self, num_classes, dim):
        super().__init__()
        self.num_classes = num_classes
        self.weight = nn.Parameter(torch.randn(num_classes, dim))

    def forward(self, ids):
        one_hot = F.one_hot(ids, self.num_classes).to(self.weight.dtype)
        return one_hot @ self.weight


def get_inputs():
    return [torch.randint(0, num_classes, (num_ids,))]


def get_init_inputs():
    return [num_classes, dim]


# kerneljudge metadata
CATEGORY = "indexing"
TAGS = ["one-hot", "matmul", "gather"]
SMALL = {"num_ids": 256, "num_classes": 1024, "dim": 64}
HELD_OUT = [{"num_ids": 8191, "num_classes": 16381, "dim": 1027}]
HELD_OUT_SMALL = [{"num_ids": 97, "num_classes": 1001, "dim": 37}]
