# expect: correct
# problem: 3_layernorm.py
# why: two-pass mean/variance layer norm in a C++ CPU kernel (shared examples source)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Shared by every C++ example: identical load_inline arguments, so one build serves all of them.
EXAMPLES_CPU_OPS_SRC = r"""
// CPU kernels shared by the bundled C++ example solutions. Each example passes this exact string to
// load_inline with the same name, function list and flags, so one build serves all of them.
#include <torch/extension.h>
#include <cmath>

static void check_f32_2d(const torch::Tensor& t, const char* what) {
  TORCH_CHECK(t.device().is_cpu(), what, " must be a CPU tensor");
  TORCH_CHECK(t.scalar_type() == torch::kFloat32, what, " must be float32");
  TORCH_CHECK(t.dim() == 2, what, " must be 2-D");
}

// out[r, c] = gelu(x[r, c]) * scale[c], exact (erf) GELU
torch::Tensor gelu_scale(torch::Tensor x, torch::Tensor scale) {
  check_f32_2d(x, "x");
  TORCH_CHECK(scale.dim() == 1 && scale.size(0) == x.size(1), "scale must have x.size(1) elements");
  auto xc = x.contiguous();
  auto sc = scale.contiguous();
  auto out = torch::empty_like(xc);
  const float* xp = xc.data_ptr<float>();
  const float* sp = sc.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t cols = xc.size(1);
  at::parallel_for(0, xc.size(0), 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const float v = xp[r * cols + c];
        op[r * cols + c] = 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f)) * sp[c];
      }
    }
  });
  return out;
}

// Row-wise softmax: max, then sum of exp(x - max), then normalise.
torch::Tensor softmax_rows(torch::Tensor x) {
  check_f32_2d(x, "x");
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  const float* xp = xc.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t cols = xc.size(1);
  at::parallel_for(0, xc.size(0), 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* row = xp + r * cols;
      float* orow = op + r * cols;
      float m = -INFINITY;
      for (int64_t c = 0; c < cols; ++c) m = std::max(m, row[c]);
      double total = 0.0;
      for (int64_t c = 0; c < cols; ++c) {
        orow[c] = std::exp(row[c] - m);
        total += orow[c];
      }
      const float inv = static_cast<float>(1.0 / total);
      for (int64_t c = 0; c < cols; ++c) orow[c] *= inv;
    }
  });
  return out;
}

static void layernorm_row(const float* row, const float* w, const float* b, float* orow, int64_t cols, float eps) {
  double mean = 0.0;
  for (int64_t c = 0; c < cols; ++c) mean += row[c];
  mean /= static_cast<double>(cols);
  double var = 0.0;
  for (int64_t c = 0; c < cols; ++c) {
    const double d = row[c] - mean;
    var += d * d;
  }
  var /= static_cast<double>(cols);
  const float rstd = static_cast<float>(1.0 / std::sqrt(var + eps));
  const float mu = static_cast<float>(mean);
  for (int64_t c = 0; c < cols; ++c) orow[c] = (row[c] - mu) * rstd * w[c] + b[c];
}

// Layer norm over the last dimension (biased variance, like torch).
torch::Tensor layernorm_rows(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
  check_f32_2d(x, "x");
  TORCH_CHECK(weight.numel() == x.size(1) && bias.numel() == x.size(1), "weight/bias size mismatch");
  auto xc = x.contiguous();
  auto wc = weight.contiguous();
  auto bc = bias.contiguous();
  auto out = torch::empty_like(xc);
  const int64_t cols = xc.size(1);
  const float* xp = xc.data_ptr<float>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, xc.size(0), 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      layernorm_row(xp + r * cols, wc.data_ptr<float>(), bc.data_ptr<float>(), op + r * cols, cols,
                    static_cast<float>(eps));
  });
  return out;
}

// Only for the wrong example 3_layernorm__wrong_cpp: rows are handled four at a time and the
// remainder loop was forgotten, so the last rows % 4 rows of the (uninitialised) output are never written.
torch::Tensor layernorm_rows_unroll4(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
  check_f32_2d(x, "x");
  TORCH_CHECK(weight.numel() == x.size(1) && bias.numel() == x.size(1), "weight/bias size mismatch");
  auto xc = x.contiguous();
  auto wc = weight.contiguous();
  auto bc = bias.contiguous();
  auto out = torch::empty_like(xc);
  const int64_t cols = xc.size(1);
  const float* xp = xc.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t groups = xc.size(0) / 4;
  at::parallel_for(0, groups, 1, [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g)
      for (int64_t r = 4 * g; r < 4 * g + 4; ++r)
        layernorm_row(xp + r * cols, wc.data_ptr<float>(), bc.data_ptr<float>(), op + r * cols, cols,
                      static_cast<float>(eps));
  });
  return out;
}

// out = relu(x @ weight.T + bias); weight is (out_features, in_features) like nn.Linear.
torch::Tensor matmul_bias_relu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  check_f32_2d(x, "x");
  check_f32_2d(weight, "weight");
  TORCH_CHECK(weight.size(1) == x.size(1) && bias.numel() == weight.size(0), "shape mismatch");
  auto xc = x.contiguous();
  auto wc = weight.contiguous();
  auto bc = bias.contiguous();
  const int64_t m = xc.size(0), k = xc.size(1), n = wc.size(0);
  auto out = torch::empty({m, n}, xc.options());
  const float* xp = xc.data_ptr<float>();
  const float* wp = wc.data_ptr<float>();
  const float* bp = bc.data_ptr<float>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, m, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const float* xr = xp + i * k;
        const float* wr = wp + j * k;
        float acc = 0.0f;
        for (int64_t p = 0; p < k; ++p) acc += xr[p] * wr[p];
        acc += bp[j];
        op[i * n + j] = acc > 0.0f ? acc : 0.0f;
      }
    }
  });
  return out;
}
"""

_ops = load_inline(
    name="kj_examples_cpu_ops",
    cpp_sources=EXAMPLES_CPU_OPS_SRC,
    functions=["gelu_scale", "softmax_rows", "layernorm_rows", "layernorm_rows_unroll4", "matmul_bias_relu"],
    extra_cflags=["-O2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))
        self.bias = nn.Parameter(torch.zeros(hidden))

    def forward(self, x):
        return _ops.layernorm_rows(x, self.weight, self.bias, self.eps)
