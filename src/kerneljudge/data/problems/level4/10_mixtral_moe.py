"""Small Mixtral sparse-MoE decoder stack (Hugging Face transformers, seeded random weights; GQA attention, top-2 of 8
SwiGLU experts per token): last hidden states."""
import torch
import torch.nn as nn
from transformers import MixtralConfig, MixtralModel

batch_size = 4
seq_len = 512
vocab_size = 32000
hidden = 1024
intermediate = 2048
num_layers = 4
num_heads = 16
num_kv_heads = 4
num_experts = 8      # ~265 GFLOP (data-dependent routing); ~20.1 ms on an H200 (eager fp32, no TF32); ~1.3 GB peak


class Model(nn.Module):
    def __init__(self, vocab_size, hidden, intermediate, num_layers, num_heads, num_kv_heads, num_experts):
        super().__init__()
        config = MixtralConfig(vocab_size=vocab_size, hidden_size=hidden, intermediate_size=intermediate,
                               num_hidden_layers=num_layers, num_attention_heads=num_heads,
                               num_key_value_heads=num_kv_heads, num_local_experts=num_experts,
                               num_experts_per_tok=2, max_position_embeddings=2048, attn_implementation="eager",
                               experts_implementation="eager")
        self.model = MixtralModel(config)
        with torch.no_grad():  # decisive routing: larger router logits than the 0.02-std default, so few near-ties
            for name, p in self.model.named_parameters():
                if name.endswith("gate.weight") and p.shape[0] == num_experts:
                    p.normal_(0.0, 3.0 * hidden ** -0.5)

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False, return_dict=True).last_hidden_state


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, hidden, intermediate, num_layers, num_heads, num_kv_heads, num_experts]


CATEGORY = "llm-model"
TAGS = ["llm", "hf", "mixtral", "moe", "top-k", "routing", "gqa", "rope", "rmsnorm", "swiglu"]
SMALL = {"batch_size": 2, "seq_len": 32, "vocab_size": 512, "hidden": 64, "intermediate": 96, "num_layers": 2,
         "num_heads": 4, "num_kv_heads": 2, "num_experts": 4}
HELD_OUT = [{"batch_size": 3, "seq_len": 601, "num_experts": 6}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 27, "vocab_size": 301, "hidden": 72, "intermediate": 80,
                   "num_layers": 2, "num_heads": 6, "num_kv_heads": 3, "num_experts": 5}]
# low precision: the reference itself is off fp32 by bf16 0.08 rel_l2, 2 elementwise; fp16 0.08 rel_l2, 2 elementwise (routing near-ties flip experts)
TOLERANCE = {"bf16": {"atol": 4, "rtol": 4, "rel_l2": 0.2}, "fp16": {"atol": 4, "rtol": 4, "rel_l2": 0.2}}
