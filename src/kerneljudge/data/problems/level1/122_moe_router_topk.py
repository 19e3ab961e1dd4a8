"""MoE router: gate logits x W^T (in fp32), softmax over 64 experts, top-8 selection, renormalised weights as a dense (tokens, experts) matrix."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 32768
hidden = 4096
num_experts = 64
top_k = 8  # ~17 GFLOP skinny GEMM + softmax/top-k; x 537 MB; ~0.8 ms


class Model(nn.Module):
    def __init__(self, hidden, num_experts, top_k):
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(hidden, num_experts, bias=False)
        nn.init.normal_(self.gate.weight, std=0.02)  # router logits with std ~1.3

    def forward(self, x):
        # the router runs in fp32 whatever the model precision, as in common MoE implementations
        logits = F.linear(x.float(), self.gate.weight.float())
        probs = torch.softmax(logits, dim=-1)
        weights, experts = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        gates = torch.zeros_like(probs).scatter(1, experts, weights)
        return gates.to(x.dtype)


def get_inputs():
    return [torch.randn(num_tokens, hidden)]


def get_init_inputs():
    return [hidden, num_experts, top_k]


# kerneljudge metadata
CATEGORY = "moe"
TAGS = ["llm", "moe", "router", "topk", "softmax"]
SMALL = {"num_tokens": 256, "hidden": 256, "num_experts": 16, "top_k": 4}
HELD_OUT = [{"num_tokens": 32771, "hidden": 4096, "num_experts": 60, "top_k": 6}]
HELD_OUT_SMALL = [{"num_tokens": 97, "hidden": 200, "num_experts": 12, "top_k": 3}]
