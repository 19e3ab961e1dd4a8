"""Per-sample KL divergence KL(p || q) from student log-probabilities log q and teacher probabilities p (distillation)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
vocab = 32000  # inputs 2 x 524 MB, eager intermediates 2 x 524 MB; memory-bound, ~1.1 ms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, student_log_probs, teacher_probs):
        return F.kl_div(student_log_probs, teacher_probs, reduction="none").sum(dim=-1)


def get_inputs():
    student = 2.0 * torch.randn(batch_size, vocab)
    # teacher logits = student logits + per-row amount of disagreement, so the KL varies from row to row
    teacher = student + 2.0 * torch.rand(batch_size, 1) * torch.randn(batch_size, vocab)
    return [F.log_softmax(student, dim=-1), F.softmax(teacher, dim=-1)]


def get_init_inputs():
    return []


# kerneljudge metadata
CATEGORY = "loss"
TAGS = ["llm", "kl-divergence", "distillation", "per-sample"]
SMALL = {"batch_size": 64, "vocab": 1000}
HELD_OUT = [{"batch_size": 4093, "vocab": 32011}]
HELD_OUT_SMALL = [{"batch_size": 37, "vocab": 1001}]
