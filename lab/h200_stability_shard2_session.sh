#!/usr/bin/env bash
# One device call (~10 minutes): the second half of the stability benchmark (issue 11). Shard 1 of 2 ran on
# 2026-12-01; CUDA solutions added to benchmarks/ since then would change a `--shard 2/2` split of the same
# globs, so this names the 14 solutions shard 1 did not judge. Merge afterwards, anywhere (both shards are
# merged in docs/evidence/2026-12-02-h200-stability-merged.json; the shard files were removed after that):
#     python scripts/stability_bench.py --merge SHARD1.json OUT/stability2/*-stability.json --out-dir docs/evidence/
#
#     bash lab/h200_stability_shard2_session.sh "$OUT"          # run from the repository root
set -u
OUT=${1:?usage: h200_stability_shard2_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/stability2"
only=()
for name in 1_gelu_scale__triton.py 2_softmax_rows__triton.py 3_layernorm__triton.py 4_matmul_bias_relu__triton.py \
    120_where_bool_mask__triton.py 1_square_matmul__triton.py 20_linear_bias_llm__triton_tf32.py 23_gelu__triton.py \
    39_rmsnorm__triton.py 49_max_dim__triton.py 59_softmax_attention_scores__triton.py 6_matrix_vector__triton.py \
    9_large_k_matmul__triton.py 35_bmm_batch_sum_bias_relu__triton.py; do
  only+=(--only "$name")
done
step stability 575 python3 scripts/stability_bench.py "${only[@]}" --out-dir "$W" --work-dir /tmp/kj-stability \
  --deadline-min 9.4
cat "$W/steps.txt"
