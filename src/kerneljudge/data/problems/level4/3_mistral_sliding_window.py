"""Mistral decoder stack (Hugging Face transformers, seeded random weights; GQA with a sliding-window causal mask shorter
than the sequence): last hidden states."""
import torch
import torch.nn as nn
from transformers import MistralConfig, MistralModel

batch_size = 2
seq_len = 1024
vocab_size = 32000
hidden = 1024
intermediate = 3584
num_layers = 6
num_heads = 16
num_kv_heads = 8
window = 256         # ~399 GFLOP; ~15.2 ms on an H200 (eager fp32, no TF32); ~1.6 GB peak


class Model(nn.Module):
    def __init__(self, vocab_size, hidden, intermediate, num_layers, num_heads, num_kv_heads, window):
        super().__init__()
        config = MistralConfig(vocab_size=vocab_size, hidden_size=hidden, intermediate_size=intermediate,
                               num_hidden_layers=num_layers, num_attention_heads=num_heads,
                               num_key_value_heads=num_kv_heads, sliding_window=window,
                               max_position_embeddings=4096, attn_implementation="eager")
        self.model = MistralModel(config)

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False, return_dict=True).last_hidden_state


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, hidden, intermediate, num_layers, num_heads, num_kv_heads, window]


CATEGORY = "llm-model"
TAGS = ["llm", "hf", "mistral", "sliding-window", "gqa", "rope", "rmsnorm", "swiglu"]
SMALL = {"batch_size": 2, "seq_len": 48, "vocab_size": 512, "hidden": 64, "intermediate": 160, "num_layers": 2,
         "num_heads": 4, "num_kv_heads": 2, "window": 16}
HELD_OUT = [{"batch_size": 3, "seq_len": 1001, "window": 199}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 37, "vocab_size": 301, "hidden": 96, "intermediate": 200,
                   "num_layers": 2, "num_heads": 6, "num_kv_heads": 3, "window": 11}]
# low precision: the reference itself is off fp32 by bf16 0.02 rel_l2, 0.07 elementwise; fp16 0.01 rel_l2, 0.05 elementwise
TOLERANCE = {"bf16": {"atol": 0.15, "rtol": 0.15, "rel_l2": 0.04}, "fp16": {"atol": 0.15, "rtol": 0.15, "rel_l2": 0.03}}
