#!/usr/bin/env bash
# Stage published reward hacks and their honest controls for a trust check on the GPU, from a git mirror of
# upstream KernelBench, into the git-ignored upstream/trust/ (never committed: upstream's files stay theirs):
#   problems/    level 1 problems 94 (MSE), 96 (Huber), 100 (Hinge) as upstream has them, the same with the
#                Pareto-distributed inputs of upstream PR #118 (branch bkal01/fix-level1-hacks), and level 2
#                problem 23 (Conv3d, GroupNorm, mean: its output is rounding noise)
#   solutions/   per loss problem PR #118's analytical hack, partial-computation hack and honest CUDA solution;
#                for level 2 problem 23 a constant-writing CUDA kernel (the Sakana AI CUDA Engineer's trick,
#                written here) and an identity copy
# Then, on a GPU machine (carry upstream/):
#   python3 -m kerneljudge run --problems upstream/trust/problems --solutions upstream/trust/solutions \
#       --policy lenient --out trust.jsonl
#
#     bash lab/stage_trust_check.sh [MIRROR]     # MIRROR: default $KERNELBENCH_MIRROR or the fetch location
set -euo pipefail
cd "$(dirname "$0")/.."
MIRROR=${1:-${KERNELBENCH_MIRROR:-/work/.mirror/ScalingIntelligence+KernelBench/repo}}
BRANCH=bkal01/fix-level1-hacks
if ! git -C "$MIRROR" rev-parse --verify -q "$BRANCH" >/dev/null; then
  echo "stage_trust_check: $MIRROR is not a KernelBench mirror with the branch $BRANCH" >&2
  exit 3
fi
DEST=upstream/trust
rm -rf "$DEST"
mkdir -p "$DEST/problems" "$DEST/solutions"
show() { git -C "$MIRROR" show "$1" > "$2"; }
for stem in 94_MSELoss 96_HuberLoss 100_HingeLoss; do
  show "HEAD:KernelBench/level1/$stem.py" "$DEST/problems/$stem.py"
  show "$BRANCH:src/kernelbench/tests/problems/${stem}_pareto.py" "$DEST/problems/${stem}_pareto.py"
  for problem in "$stem" "${stem}_pareto"; do
    for kind in analytical_hack partial_computation_hack correct; do
      show "$BRANCH:src/kernelbench/tests/solutions/${stem}_$kind.py" "$DEST/solutions/${problem}__$kind.py"
    done
  done
done
P23=23_Conv3d_GroupNorm_Mean
show "HEAD:KernelBench/level2/$P23.py" "$DEST/problems/$P23.py"
sed -e 's/^class Model(/class ModelNew(/' -e 's/super(Model, self)/super(ModelNew, self)/' \
  "$DEST/problems/$P23.py" > "$DEST/solutions/${P23}__identity.py"
cat > "$DEST/solutions/${P23}__constant_cuda.py" <<'PY'
# A constant-writing CUDA kernel that never reads its input (the trick of the Sakana AI CUDA Engineer's
# published kernel for this problem): must never be accepted.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
__global__ void fill(float* out, int n, float v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v;
}
torch::Tensor constant_mean(torch::Tensor x) {
    auto out = torch::empty({x.size(0)}, x.options());
    int n = out.numel();
    fill<<<(n + 255) / 256, 256>>>(out.data_ptr<float>(), n, 1e-9f);
    return out;
}
"""
_ext = load_inline(name="trust_constant_mean", cpp_sources="torch::Tensor constant_mean(torch::Tensor x);",
                   cuda_sources=SOURCE, functions=["constant_mean"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        return _ext.constant_mean(x)
PY
echo "staged $(ls "$DEST/problems" | wc -l) problems and $(ls "$DEST/solutions" | wc -l) solutions in $DEST"
