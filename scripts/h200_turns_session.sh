#!/usr/bin/env bash
# One device call: the cold-cache throughput batch after checks started sharing the GPU (timing still alone),
# solutions with nothing to build went first and twice as many solutions as cores were in flight. Two batches:
# the mixed one of earlier results (40 CUDA load_inline + 10 Triton) and one of CUDA solutions only.
# Lands in OUT/turns/.
#
#     bash scripts/h200_turns_session.sh "$OUT"          # ~8 minutes; run from the repository root
set -u
OUT=${1:?usage: h200_turns_session.sh OUT_DIR}
. scripts/device_steps.sh
session_start "$OUT/turns"
step bench_mixed 270 python3 scripts/gpu_report.py bench --count 40 --triton 10 --out "$W/mixed"
step bench_cuda 270 python3 scripts/gpu_report.py bench --count 48 --out "$W/cuda"
cat "$W/steps.txt"
