#!/usr/bin/env bash
# One device call: the cold-cache throughput batch (40 distinct CUDA load_inline solutions plus 10 Triton
# ones) after builds were limited to what the build cores can run at once and solutions with nothing to build
# were put first. Lands in OUT/throughput/.
#
#     bash lab/h200_throughput_session.sh "$OUT"          # ~4.5 minutes; run from the repository root
set -u
OUT=${1:?usage: h200_throughput_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/throughput"
step bench 285 python3 scripts/gpu_report.py bench --count 40 --triton 10 --out "$W"
cat "$W/steps.txt"
