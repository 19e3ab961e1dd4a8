"""Per-token LM loss from hidden states: LM head, logsumexp, label-smoothed cross-entropy plus z-loss, ignore_index masking."""
import torch
import torch.nn as nn

num_tokens = 2048
hidden = 1024
vocab_size = 50304  # ~211 GFLOP + passes over 412 MB of logits, ~5 ms
smoothing = 0.1
z_loss = 1e-4


class Model(nn.Module):
    def __init__(self, hidden, vocab_size, smoothing, z_loss):
        super().__init__()
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)
        with torch.no_grad():
            self.lm_head.weight.normal_(0.0, 3.0 / hidden ** 0.5)
        self.smoothing = smoothing
        self.z_loss = z_loss

    def forward(self, h, targets):
        logits = self.lm_head(h)
        lse = torch.logsumexp(logits, dim=-1)
        valid = targets != -100
        target_logit = logits.gather(1, targets.clamp(min=0).unsqueeze(1)).squeeze(1)
        nll = lse - target_logit
        smooth = lse - logits.mean(dim=-1)
        loss = (1.0 - self.smoothing) * nll + self.smoothing * smooth + self.z_loss * lse.pow(2)
        return torch.where(valid, loss, torch.zeros_like(loss))


def get_inputs():
    targets = torch.randint(0, vocab_size, (num_tokens,))
    targets = torch.where(torch.rand(num_tokens) < 0.1, torch.full_like(targets, -100), targets)
    return [torch.randn(num_tokens, hidden), targets]


def get_init_inputs():
    return [hidden, vocab_size, smoothing, z_loss]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm", "loss"]
SMALL = {"num_tokens": 32, "hidden": 64, "vocab_size": 500}
HELD_OUT = [{"num_tokens": 2001, "hidden": 1023, "vocab_size": 50257}]
HELD_OUT_SMALL = [{"num_tokens": 9, "hidden": 29, "vocab_size": 103}]
