"""Gemma causal LM (Hugging Face transformers, seeded random weights; multi-query attention with head_dim 256, (1+w)
RMSNorm, GeGLU, scaled embeddings, tied head): next-token logits."""
import torch
import torch.nn as nn
from transformers import GemmaConfig, GemmaForCausalLM

batch_size = 4
seq_len = 512
vocab_size = 32000
hidden = 1024
intermediate = 4096
num_layers = 6
num_heads = 8
head_dim = 128       # ~527 GFLOP; ~15.8 ms on an H200 (eager fp32, no TF32); ~0.9 GB peak


class Model(nn.Module):
    def __init__(self, vocab_size, hidden, intermediate, num_layers, num_heads, head_dim):
        super().__init__()
        config = GemmaConfig(vocab_size=vocab_size, hidden_size=hidden, intermediate_size=intermediate,
                             num_hidden_layers=num_layers, num_attention_heads=num_heads, num_key_value_heads=1,
                             head_dim=head_dim, hidden_activation="gelu_pytorch_tanh", max_position_embeddings=2048,
                             attn_implementation="eager")
        self.model = GemmaForCausalLM(config)

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False, return_dict=True).logits


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, hidden, intermediate, num_layers, num_heads, head_dim]


CATEGORY = "llm-model"
TAGS = ["llm", "hf", "gemma", "causal-lm", "mqa", "rope", "rmsnorm", "geglu", "logits"]
SMALL = {"batch_size": 2, "seq_len": 32, "vocab_size": 512, "hidden": 64, "intermediate": 160, "num_layers": 2,
         "num_heads": 4, "head_dim": 16}
HELD_OUT = [{"batch_size": 3, "seq_len": 601}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 27, "vocab_size": 301, "hidden": 72, "intermediate": 200,
                   "num_layers": 2, "num_heads": 3, "head_dim": 20}]
# low precision: the reference itself is off fp32 by bf16 0.01 rel_l2, 0.05 elementwise; fp16 0.005 rel_l2, 0.03 elementwise
TOLERANCE = {"bf16": {"atol": 0.15, "rtol": 0.15, "rel_l2": 0.03}, "fp16": {"atol": 0.06, "rtol": 0.06, "rel_l2": 0.01}}
