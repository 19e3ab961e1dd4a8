"""LSTM encoder-decoder with Luong dot-product attention (teacher forcing): returns per-step output-vocabulary logits."""
import torch
import torch.nn as nn

batch_size = 32
src_len = 256
tgt_len = 128
embed_dim = 256
hidden_size = 512
vocab_size = 8000    # ~79 GFLOP; ~10.5 ms on an H200 (eager fp32, no TF32); ~0.3 GB peak


class Model(nn.Module):
    def __init__(self, embed_dim, hidden_size, vocab_size):
        super().__init__()
        self.encoder = nn.LSTM(embed_dim, hidden_size, batch_first=True)
        self.decoder = nn.LSTM(embed_dim, hidden_size, batch_first=True)
        self.combine = nn.Linear(2 * hidden_size, hidden_size)
        self.out = nn.Linear(hidden_size, vocab_size)

    def forward(self, src, tgt):
        enc, state = self.encoder(src)
        dec, _ = self.decoder(tgt, state)                  # decoder starts from the encoder's final state
        scores = torch.bmm(dec, enc.transpose(1, 2))        # (B, T, S) dot-product attention
        ctx = torch.bmm(torch.softmax(scores, dim=-1), enc)
        h = torch.tanh(self.combine(torch.cat([ctx, dec], dim=-1)))
        return self.out(h)


def get_inputs():
    return [torch.randn(batch_size, src_len, embed_dim), torch.randn(batch_size, tgt_len, embed_dim)]


def get_init_inputs():
    return [embed_dim, hidden_size, vocab_size]


CATEGORY = "rnn"
TAGS = ["lstm", "seq2seq", "attention", "recurrent"]
SMALL = {"batch_size": 4, "src_len": 20, "tgt_len": 12, "embed_dim": 16, "hidden_size": 32, "vocab_size": 50}
HELD_OUT = [{"batch_size": 27, "src_len": 173, "tgt_len": 91, "vocab_size": 7919}]
HELD_OUT_SMALL = [{"batch_size": 3, "src_len": 17, "tgt_len": 9, "embed_dim": 11, "hidden_size": 23, "vocab_size": 37}]
# low precision: the reference itself is off fp32 by fp16 0.002 rel_l2, 0.01 elementwise
TOLERANCE = {"fp16": {"atol": 0.03, "rtol": 0.03, "rel_l2": 0.005}}
