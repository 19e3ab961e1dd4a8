"""LM head: logits = h @ W^T over the vocabulary, log-softmax, then gather the log-probability of each target token."""
import torch
import torch.nn as nn

num_tokens = 2048
hidden = 2048
vocab_size = 32000  # ~268 GFLOP + log-softmax over 262 MB of logits, ~6 ms


class Model(nn.Module):
    def __init__(self, hidden, vocab_size):
        super().__init__()
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)
        with torch.no_grad():
            self.lm_head.weight.normal_(0.0, 3.0 / hidden ** 0.5)

    def forward(self, h, targets):
        logp = torch.log_softmax(self.lm_head(h), dim=-1)
        return logp.gather(1, targets.unsqueeze(1)).squeeze(1)


def get_inputs():
    return [torch.randn(num_tokens, hidden), torch.randint(0, vocab_size, (num_tokens,))]


def get_init_inputs():
    return [hidden, vocab_size]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm", "loss"]
SMALL = {"num_tokens": 32, "hidden": 64, "vocab_size": 500}
HELD_OUT = [{"num_tokens": 2001, "hidden": 2047, "vocab_size": 32003}]
HELD_OUT_SMALL = [{"num_tokens": 7, "hidden": 33, "vocab_size": 257}]
