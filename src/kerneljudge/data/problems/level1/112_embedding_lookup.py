"""Token embedding lookup: int64 token ids (batch, seq) index a (vocab, hidden) embedding table."""
import torch
import torch.nn as nn

batch_size = 32
seq_len = 4096
vocab = 128256
hidden = 2048  # table 1.05 GB, out 1.07 GB; memory-bound, ~0.6 ms


class Model(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)

    def forward(self, token_ids):
        return self.embed(token_ids)


def get_inputs():
    return [torch.randint(0, vocab, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab, hidden]


# kerneljudge metadata
CATEGORY = "indexing"
TAGS = ["llm", "embedding", "gather"]
SMALL = {"batch_size": 4, "seq_len": 128, "vocab": 5000, "hidden": 64}
HELD_OUT = [{"batch_size": 31, "seq_len": 4093, "vocab": 128257, "hidden": 2052}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 77, "vocab": 1001, "hidden": 37}]
