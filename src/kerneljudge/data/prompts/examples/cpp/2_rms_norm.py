import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <torch/extension.h>
#include <cmath>

// Each row is independent: parallelise over rows, accumulate the sum of squares in double.
torch::Tensor rms_norm(torch::Tensor x, torch::Tensor weight, double eps) {
  TORCH_CHECK(x.device().is_cpu() && weight.device().is_cpu(), "inputs must be CPU tensors");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
              "inputs must be float32");
  const int64_t cols = x.size(-1);
  TORCH_CHECK(weight.numel() == cols, "weight must have x.size(-1) elements");
  auto xc = x.contiguous();
  auto wc = weight.contiguous();
  auto out = torch::empty_like(xc);
  const int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
  const float* xp = xc.data_ptr<float>();
  const float* wp = wc.data_ptr<float>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* row = xp + r * cols;
      float* out_row = op + r * cols;
      double sum_sq = 0.0;
      for (int64_t c = 0; c < cols; ++c) sum_sq += static_cast<double>(row[c]) * row[c];
      const float scale = static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(cols) + eps));
      for (int64_t c = 0; c < cols; ++c) out_row[c] = row[c] * scale * wp[c];
    }
  });
  return out;
}
"""

_ext = load_inline(
    name="kj_shot_rms_norm_cpp",
    cpp_sources=CPP_SOURCE,
    functions=["rms_norm"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        # same name and shape as Model's parameter, so it receives the reference's values
        self.weight = nn.Parameter(torch.randn(features))
        self.eps = eps

    def forward(self, x):
        return _ext.rms_norm(x, self.weight, self.eps)
