"""MoE with sigmoid router scores, bias-adjusted top-k selection, normalised and scaled gate weights, routed SwiGLU experts plus an always-on shared expert."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_tokens = 2048
hidden = 1024
expert_hidden = 512
num_experts = 16
top_k = 4
routed_scaling = 2.5  # experts evaluated densely here: ~116 GFLOP, ~3 ms


def _swiglu(x, w_gate, w_up, w_down):
    return torch.matmul(F.silu(torch.matmul(x, w_gate)) * torch.matmul(x, w_up), w_down)


class Model(nn.Module):
    def __init__(self, hidden, expert_hidden, num_experts, top_k, routed_scaling):
        super().__init__()
        self.top_k = top_k
        self.routed_scaling = routed_scaling
        self.router = nn.Linear(hidden, num_experts, bias=False)
        with torch.no_grad():
            self.router.weight.normal_(0.0, 2.0 / hidden ** 0.5)
        self.register_buffer("selection_bias", 0.5 * torch.randn(num_experts))
        self.w_gate = nn.Parameter(torch.randn(num_experts, hidden, expert_hidden) / hidden ** 0.5)
        self.w_up = nn.Parameter(torch.randn(num_experts, hidden, expert_hidden) / hidden ** 0.5)
        self.w_down = nn.Parameter(torch.randn(num_experts, expert_hidden, hidden) / expert_hidden ** 0.5)
        self.s_gate = nn.Parameter(torch.randn(hidden, 2 * expert_hidden) / hidden ** 0.5)
        self.s_up = nn.Parameter(torch.randn(hidden, 2 * expert_hidden) / hidden ** 0.5)
        self.s_down = nn.Parameter(torch.randn(2 * expert_hidden, hidden) / (2 * expert_hidden) ** 0.5)

    def forward(self, x):
        scores = torch.sigmoid(F.linear(x.float(), self.router.weight.float()))  # router in fp32
        _, idx = torch.topk(scores + self.selection_bias.float(), self.top_k, dim=-1)  # bias only steers selection
        weights = scores.gather(1, idx)
        weights = weights / weights.sum(dim=-1, keepdim=True) * self.routed_scaling
        combine = torch.zeros_like(scores).scatter(1, idx, weights).to(x.dtype)  # (tokens, experts)
        routed = _swiglu(x.unsqueeze(0), self.w_gate, self.w_up, self.w_down)  # (experts, tokens, hidden)
        return torch.einsum("te,etd->td", combine, routed) + _swiglu(x, self.s_gate, self.s_up, self.s_down)


def get_inputs():
    return [torch.randn(num_tokens, hidden)]


def get_init_inputs():
    return [hidden, expert_hidden, num_experts, top_k, routed_scaling]


# kerneljudge metadata
CATEGORY = "fusion-gemm"
TAGS = ["llm", "moe"]
SMALL = {"num_tokens": 32, "hidden": 32, "expert_hidden": 16, "num_experts": 6, "top_k": 2}
HELD_OUT = [{"num_tokens": 2001, "hidden": 1023, "expert_hidden": 509, "num_experts": 12, "top_k": 3}]
HELD_OUT_SMALL = [{"num_tokens": 9, "hidden": 21, "expert_hidden": 11, "num_experts": 5, "top_k": 3}]
