"""BERT-style encoder: word + position + segment embeddings with LayerNorm, then post-norm transformer layers with a
key-padding mask built from per-sequence lengths; returns the last hidden states."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
seq_len = 512
vocab_size = 30522
d_model = 768
num_heads = 12
num_layers = 4       # ~515 GFLOP; ~15.2 ms on an H200 (eager fp32, no TF32); ~0.9 GB peak


class Layer(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)
        nn.init.normal_(self.qkv.weight, 0.0, (2.0 / d) ** 0.5)

    def forward(self, x, pad):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        s = (q @ k.transpose(-2, -1) / math.sqrt(d // self.h)).masked_fill(pad[:, None, None, :], float("-inf"))
        x = self.ln1(x + self.out((torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(b, t, d)))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


class Model(nn.Module):
    def __init__(self, vocab_size, max_len, d_model, num_heads, num_layers):
        super().__init__()
        self.word = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.seg = nn.Embedding(2, d_model)
        self.ln = nn.LayerNorm(d_model, eps=1e-12)
        self.layers = nn.ModuleList([Layer(d_model, num_heads) for _ in range(num_layers)])

    def forward(self, input_ids, token_type_ids, lengths):
        t = input_ids.shape[1]
        pos = torch.arange(t, device=input_ids.device)
        x = self.ln(self.word(input_ids) + self.pos(pos) + self.seg(token_type_ids))
        pad = pos[None, :] >= lengths[:, None]          # True where the key is padding
        for layer in self.layers:
            x = layer(x, pad)
        return x


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len)),
            torch.randint(0, 2, (batch_size, seq_len)),
            torch.randint(seq_len // 4, seq_len + 1, (batch_size,))]


def get_init_inputs():
    return [vocab_size, seq_len, d_model, num_heads, num_layers]


CATEGORY = "transformer"
TAGS = ["llm", "bert", "encoder", "attention", "padding-mask", "embedding", "post-norm", "layernorm", "gelu"]
SMALL = {"batch_size": 2, "seq_len": 32, "vocab_size": 300, "d_model": 64, "num_heads": 4, "num_layers": 2}
HELD_OUT = [{"batch_size": 11, "seq_len": 381}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 23, "vocab_size": 201, "d_model": 48, "num_heads": 3, "num_layers": 2}]
# low precision: the reference itself is off fp32 by bf16 0.008 rel_l2, 0.04 elementwise; fp16 0.004 rel_l2, 0.02 elementwise
TOLERANCE = {"bf16": {"atol": 0.1, "rtol": 0.1, "rel_l2": 0.02}, "fp16": {"atol": 0.04, "rtol": 0.04, "rel_l2": 0.008}}
