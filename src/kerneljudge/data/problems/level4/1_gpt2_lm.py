"""GPT-2 language model (Hugging Face transformers, seeded random weights): next-token logits for a batch of token ids."""
import torch
import torch.nn as nn
from transformers import GPT2Config, GPT2LMHeadModel

batch_size = 8
seq_len = 512
vocab_size = 50257
hidden = 768
num_layers = 6
num_heads = 12       # ~703 GFLOP; ~20.6 ms on an H200 (eager fp32, no TF32); ~1.2 GB peak


class Model(nn.Module):
    def __init__(self, vocab_size, hidden, num_layers, num_heads):
        super().__init__()
        config = GPT2Config(vocab_size=vocab_size, n_positions=1024, n_embd=hidden, n_layer=num_layers,
                            n_head=num_heads, bos_token_id=vocab_size - 1, eos_token_id=vocab_size - 1,
                            attn_implementation="eager")
        self.model = GPT2LMHeadModel(config)

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False, return_dict=True).logits


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, hidden, num_layers, num_heads]


CATEGORY = "llm-model"
TAGS = ["llm", "hf", "gpt2", "causal-lm", "logits"]
SMALL = {"batch_size": 2, "seq_len": 32, "vocab_size": 512, "hidden": 64, "num_layers": 2, "num_heads": 4}
HELD_OUT = [{"batch_size": 5, "seq_len": 777}]
HELD_OUT_SMALL = [{"batch_size": 3, "seq_len": 27, "vocab_size": 301, "hidden": 48, "num_layers": 2, "num_heads": 3}]
# low precision: the reference itself is off fp32 by bf16 0.01 rel_l2, 0.06 elementwise; fp16 0.005 rel_l2, 0.03 elementwise
TOLERANCE = {"bf16": {"atol": 0.15, "rtol": 0.15, "rel_l2": 0.03}, "fp16": {"atol": 0.06, "rtol": 0.06, "rel_l2": 0.01}}
