#!/usr/bin/env bash
# One device call (~7 minutes): the fused GPU compare (numerics/fused_compare.py) against the torch passes on
# every kind of output, bf16 included; what one compare of a 1.25 GiB fp32 output costs through each; then the
# cold-cache throughput batch of docs/evidence/2026-12-02-h200-device-turns.md (40 CUDA load_inline + 10 Triton) to
# compare with its 732/h.
#
#     bash lab/h200_compare_throughput_session.sh "$OUT"          # run from the repository root
set -u
OUT=${1:?usage: h200_compare_throughput_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/compare-throughput"
step probe 90 python3 tests/fused_compare_probe.py --device cuda
step compare 60 python3 scripts/compare_cost.py --device cuda
step bench 280 python3 scripts/gpu_report.py bench --count 40 --triton 10 --out "$W"
cat "$W/probe.log" "$W/compare.log" "$W/steps.txt"
