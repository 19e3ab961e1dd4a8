"""Indices of the top-k (k = 100) keys of each row, in descending key order; keys are distinct int64 values."""
import torch
import torch.nn as nn

batch_size = 4096
num_keys = 16384  # keys 537 MB (int64), out 3.3 MB; ~1 ms
k = 100


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, keys):
        return torch.topk(keys, self.k, dim=-1, largest=True, sorted=True).indices


def get_inputs():
    # distinct keys in every row (a random permutation scaled up, plus jitter), so the answer is unique
    perm = torch.argsort(torch.rand(batch_size, num_keys), dim=-1)
    return [perm * 1000 + torch.randint(0, 1000, (batch_size, num_keys))]


def get_init_inputs():
    return [k]


# kerneljudge metadata
CATEGORY = "indexing"
TAGS = ["topk", "int64"]
SMALL = {"batch_size": 32, "num_keys": 2048, "k": 100}
HELD_OUT = [{"batch_size": 4091, "num_keys": 16381, "k": 100}]
HELD_OUT_SMALL = [{"batch_size": 7, "num_keys": 1001, "k": 17}]
