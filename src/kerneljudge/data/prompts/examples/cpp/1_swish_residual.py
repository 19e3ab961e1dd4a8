import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor swish_residual(torch::Tensor x, torch::Tensor residual) {
  TORCH_CHECK(x.device().is_cpu() && residual.device().is_cpu(), "inputs must be CPU tensors");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && residual.scalar_type() == torch::kFloat32,
              "inputs must be float32");
  TORCH_CHECK(x.sizes() == residual.sizes(), "x and residual must have the same shape");
  auto xc = x.contiguous();
  auto rc = residual.contiguous();
  auto out = torch::empty_like(xc);
  const float* xp = xc.data_ptr<float>();
  const float* rp = rc.data_ptr<float>();
  float* op = out.data_ptr<float>();
  // at::parallel_for splits [0, n) into chunks of at least 16384 elements across the intra-op threads
  at::parallel_for(0, xc.numel(), 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float v = xp[i];
      op[i] = v / (1.0f + std::exp(-v)) + rp[i];
    }
  });
  return out;
}
"""

_ext = load_inline(
    name="kj_shot_swish_residual_cpp",
    cpp_sources=CPP_SOURCE,
    functions=["swish_residual"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, residual):
        return _ext.swish_residual(x, residual)
