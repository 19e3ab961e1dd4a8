"""Small encoder-decoder transformer (teacher forcing): shared token embedding + sinusoidal positions, pre-norm encoder
layers, decoder layers with causal self-attention and cross-attention, final norm and output logits."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
src_len = 256
tgt_len = 256
vocab_size = 8000
d_model = 512
num_heads = 8
num_layers = 3       # ~233 GFLOP; ~7.5 ms on an H200 (eager fp32, no TF32); ~0.5 GB peak


def attention(q_in, kv_in, wq, wkv, wo, h, causal):
    b, t, d = q_in.shape
    q = wq(q_in).view(b, t, h, d // h).transpose(1, 2)
    k, v = wkv(kv_in).view(b, kv_in.shape[1], 2, h, d // h).permute(2, 0, 3, 1, 4)
    s = q @ k.transpose(-2, -1) / math.sqrt(d // h)
    if causal:
        s = s.masked_fill(torch.ones(t, t, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return wo((torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(b, t, d))


class Layer(nn.Module):
    def __init__(self, d, h, cross):
        super().__init__()
        self.h, self.cross = h, cross
        n = 3 if cross else 2
        self.norms = nn.ModuleList([nn.LayerNorm(d) for _ in range(n)])
        self.q = nn.ModuleList([nn.Linear(d, d) for _ in range(n - 1)])
        self.kv = nn.ModuleList([nn.Linear(d, 2 * d) for _ in range(n - 1)])
        self.o = nn.ModuleList([nn.Linear(d, d) for _ in range(n - 1)])
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        for lin in list(self.q) + list(self.kv):
            nn.init.normal_(lin.weight, 0.0, (2.0 / d) ** 0.5)

    def forward(self, x, memory=None):
        h = self.norms[0](x)
        x = x + attention(h, h, self.q[0], self.kv[0], self.o[0], self.h, causal=self.cross)
        if self.cross:
            x = x + attention(self.norms[1](x), memory, self.q[1], self.kv[1], self.o[1], self.h, causal=False)
        return x + self.fc2(F.relu(self.fc1(self.norms[-1](x))))


class Model(nn.Module):
    def __init__(self, vocab_size, d_model, num_heads, num_layers):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.enc = nn.ModuleList([Layer(d_model, num_heads, False) for _ in range(num_layers)])
        self.dec = nn.ModuleList([Layer(d_model, num_heads, True) for _ in range(num_layers)])
        self.enc_norm = nn.LayerNorm(d_model)
        self.dec_norm = nn.LayerNorm(d_model)
        self.out = nn.Linear(d_model, vocab_size)

    def _embed(self, ids):
        t, d = ids.shape[1], self.embed.embedding_dim
        pos = torch.arange(t, device=ids.device, dtype=torch.float32)[:, None]
        freq = torch.exp(torch.arange(0, d, 2, device=ids.device, dtype=torch.float32) * (-math.log(10000.0) / d))
        pe = torch.cat([torch.sin(pos * freq), torch.cos(pos * freq)], dim=-1)
        return self.embed(ids) + pe.to(self.embed.weight.dtype)

    def forward(self, src, tgt):
        mem = self._embed(src)
        for layer in self.enc:
            mem = layer(mem)
        mem = self.enc_norm(mem)
        x = self._embed(tgt)
        for layer in self.dec:
            x = layer(x, mem)
        return self.out(self.dec_norm(x))


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, src_len)), torch.randint(0, vocab_size, (batch_size, tgt_len))]


def get_init_inputs():
    return [vocab_size, d_model, num_heads, num_layers]


CATEGORY = "transformer"
TAGS = ["llm", "encoder-decoder", "attention", "cross-attention", "causal", "embedding", "layernorm"]
SMALL = {"batch_size": 2, "src_len": 24, "tgt_len": 16, "vocab_size": 300, "d_model": 64, "num_heads": 4, "num_layers": 2}
HELD_OUT = [{"batch_size": 13, "src_len": 301, "tgt_len": 197, "vocab_size": 7999}]
HELD_OUT_SMALL = [{"batch_size": 3, "src_len": 19, "tgt_len": 11, "vocab_size": 201, "d_model": 48, "num_heads": 3,
                   "num_layers": 2}]
# low precision: the reference itself is off fp32 by bf16 0.008 rel_l2, 0.04 elementwise; fp16 0.004 rel_l2, 0.02 elementwise
TOLERANCE = {"bf16": {"atol": 0.08, "rtol": 0.08, "rel_l2": 0.02}, "fp16": {"atol": 0.05, "rtol": 0.05, "rel_l2": 0.008}}
