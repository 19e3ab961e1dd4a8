"""Sequence tagger: token embedding, two-layer bidirectional GRU, per-token linear projection to tag scores."""
import torch
import torch.nn as nn

batch_size = 64
seq_len = 256
vocab_size = 16000
embed_dim = 256
hidden_size = 256
num_tags = 48        # ~65 GFLOP; ~15.8 ms on an H200 (eager fp32, no TF32); ~0.5 GB peak


class Model(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_size, num_tags):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.gru = nn.GRU(embed_dim, hidden_size, 2, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * hidden_size, num_tags)

    def forward(self, tokens):
        out, _ = self.gru(self.embed(tokens))
        return self.proj(out)


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, embed_dim, hidden_size, num_tags]


CATEGORY = "rnn"
TAGS = ["gru", "bidirectional", "embedding", "recurrent"]
SMALL = {"batch_size": 4, "seq_len": 20, "vocab_size": 100, "embed_dim": 16, "hidden_size": 24, "num_tags": 8}
HELD_OUT = [{"batch_size": 41, "seq_len": 199, "num_tags": 37}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 13, "vocab_size": 77, "embed_dim": 12, "hidden_size": 19, "num_tags": 5}]
# low precision: the reference itself is off fp32 by fp16 0.003 rel_l2, 0.01 elementwise
TOLERANCE = {"fp16": {"atol": 0.03, "rtol": 0.03, "rel_l2": 0.008}}
