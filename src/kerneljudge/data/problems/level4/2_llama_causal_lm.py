"""Llama causal LM (Hugging Face transformers, seeded random weights; RMSNorm, RoPE, GQA, SwiGLU): next-token logits."""
import torch
import torch.nn as nn
from transformers import LlamaConfig, LlamaForCausalLM

batch_size = 4
seq_len = 512
vocab_size = 32000
hidden = 1024
intermediate = 2816
num_layers = 8
num_heads = 16
num_kv_heads = 4     # ~538 GFLOP; ~18.7 ms on an H200 (eager fp32, no TF32); ~3.4 GB peak


class Model(nn.Module):
    def __init__(self, vocab_size, hidden, intermediate, num_layers, num_heads, num_kv_heads):
        super().__init__()
        config = LlamaConfig(vocab_size=vocab_size, hidden_size=hidden, intermediate_size=intermediate,
                             num_hidden_layers=num_layers, num_attention_heads=num_heads,
                             num_key_value_heads=num_kv_heads, max_position_embeddings=2048,
                             attn_implementation="eager")
        self.model = LlamaForCausalLM(config)

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False, return_dict=True).logits


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, hidden, intermediate, num_layers, num_heads, num_kv_heads]


CATEGORY = "llm-model"
TAGS = ["llm", "hf", "llama", "causal-lm", "gqa", "rope", "rmsnorm", "swiglu", "logits"]
SMALL = {"batch_size": 2, "seq_len": 32, "vocab_size": 512, "hidden": 64, "intermediate": 160, "num_layers": 2,
         "num_heads": 4, "num_kv_heads": 2}
HELD_OUT = [{"batch_size": 3, "seq_len": 599, "vocab_size": 32003}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 27, "vocab_size": 301, "hidden": 96, "intermediate": 200,
                   "num_layers": 2, "num_heads": 6, "num_kv_heads": 3}]
# low precision: the reference itself is off fp32 by bf16 0.02 rel_l2, 0.1 elementwise; fp16 0.01 rel_l2, 0.07 elementwise
TOLERANCE = {"bf16": {"atol": 0.2, "rtol": 0.2, "rel_l2": 0.04}, "fp16": {"atol": 0.15, "rtol": 0.15, "rel_l2": 0.03}}
