"""Small GPT-2-style language model: token + learned position embeddings, pre-norm causal decoder blocks, final
LayerNorm and a weight-tied LM head; returns next-token logits over the vocabulary."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 512
vocab_size = 50257
max_positions = 1024
d_model = 768
num_heads = 12
num_layers = 6       # ~703 GFLOP; ~18.8 ms on an H200 (eager fp32, no TF32); ~1.3 GB peak


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        nn.init.normal_(self.qkv.weight, 0.0, (2.0 / d) ** 0.5)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        s = q @ k.transpose(-2, -1) / math.sqrt(d // self.h)
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        att = torch.softmax(s.masked_fill(causal, float("-inf")), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class Model(nn.Module):
    def __init__(self, vocab_size, max_positions, d_model, num_heads, num_layers):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(max_positions, d_model)
        nn.init.normal_(self.wte.weight, 0.0, 0.2)
        nn.init.normal_(self.wpe.weight, 0.0, 0.1)
        self.blocks = nn.Sequential(*[Block(d_model, num_heads) for _ in range(num_layers)])
        self.ln_f = nn.LayerNorm(d_model)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.blocks(self.wte(idx) + self.wpe(pos))
        return self.ln_f(x) @ self.wte.weight.t()   # tied LM head


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, max_positions, d_model, num_heads, num_layers]


CATEGORY = "transformer"
TAGS = ["llm", "gpt", "attention", "causal", "embedding", "lm-head", "layernorm", "gelu"]
SMALL = {"batch_size": 2, "seq_len": 32, "vocab_size": 500, "max_positions": 64, "d_model": 64, "num_heads": 4,
         "num_layers": 2}
HELD_OUT = [{"batch_size": 5, "seq_len": 777, "vocab_size": 32001}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 25, "vocab_size": 301, "max_positions": 40, "d_model": 48,
                   "num_heads": 3, "num_layers": 2}]
# low precision: the reference itself is off fp32 by bf16 0.01 rel_l2, 0.07 elementwise; fp16 0.007 rel_l2, 0.04 elementwise
TOLERANCE = {"bf16": {"atol": 0.15, "rtol": 0.15, "rel_l2": 0.03}, "fp16": {"atol": 0.08, "rtol": 0.08, "rel_l2": 0.015}}
