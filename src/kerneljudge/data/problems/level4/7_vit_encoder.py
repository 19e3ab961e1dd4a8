"""Vision Transformer (Hugging Face transformers ViTModel, seeded random weights): patch embedding, class token, encoder
layers; last hidden states for a batch of images."""
import torch
import torch.nn as nn
from transformers import ViTConfig, ViTModel

batch_size = 32
image_size = 224
patch_size = 16
hidden = 768
num_layers = 6
num_heads = 12       # ~566 GFLOP; ~16.6 ms on an H200 (eager fp32, no TF32); ~0.5 GB peak


class Model(nn.Module):
    def __init__(self, image_size, patch_size, hidden, num_layers, num_heads):
        super().__init__()
        config = ViTConfig(image_size=image_size, patch_size=patch_size, hidden_size=hidden,
                           num_hidden_layers=num_layers, num_attention_heads=num_heads, intermediate_size=4 * hidden,
                           attn_implementation="eager")
        self.model = ViTModel(config, add_pooling_layer=False)

    def forward(self, pixel_values):
        return self.model(pixel_values=pixel_values, return_dict=True).last_hidden_state


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [image_size, patch_size, hidden, num_layers, num_heads]


CATEGORY = "hf-model"
TAGS = ["hf", "vit", "vision", "encoder", "attention"]
SMALL = {"batch_size": 2, "image_size": 32, "patch_size": 8, "hidden": 64, "num_layers": 2, "num_heads": 4}
HELD_OUT = [{"batch_size": 19, "image_size": 208}]
HELD_OUT_SMALL = [{"batch_size": 3, "image_size": 40, "patch_size": 8, "hidden": 48, "num_layers": 2, "num_heads": 3}]
# low precision: the reference itself is off fp32 by bf16 0.009 rel_l2, 0.04 elementwise; fp16 0.003 rel_l2, 0.02 elementwise
TOLERANCE = {"bf16": {"atol": 0.1, "rtol": 0.1, "rel_l2": 0.02}, "fp16": {"atol": 0.04, "rtol": 0.04, "rel_l2": 0.008}}
