#!/usr/bin/env bash
# One device call (~8 minutes) after the fused GPU compares, the staggered build priorities and a batch that
# submits solutions compiling nothing first: the cold-cache throughput batch (40 CUDA load_inline + 10
# Triton), then every GPU fixture's verdict against its label (no verdict may change). Lands in OUT/pipeline/.
#
#     bash lab/h200_pipeline_session.sh "$OUT"          # run from the repository root
set -u
OUT=${1:?usage: h200_pipeline_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/pipeline"
step bench 270 python3 scripts/gpu_report.py bench --count 40 --triton 10 --out "$W"
step fixtures 220 python3 scripts/gpu_report.py fixtures --out "$W" --cache /tmp/kj-pipeline-cache
cat "$W/steps.txt"
