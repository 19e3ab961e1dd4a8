#!/usr/bin/env bash
# One device call for the speed issue (12) after the build savings: each compile job of a published-style
# CUDA solution alone, as written and with lean CUDA headers / the precompiled binding header
# (scripts/build_units.py); then the cold-cache throughput batch: 40 distinct CUDA load_inline solutions
# plus 10 Triton ones (scripts/gpu_report.py bench). Everything lands in OUT/builds/.
#
#     bash lab/h200_builds_session.sh "$OUT"          # ~8 minutes; run from the repository root
set -u
OUT=${1:?usage: h200_builds_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/builds"
step units 200 python3 scripts/build_units.py --out "$W" --solution benchmarks/solutions/level1/21_relu__cuda.py
step bench 330 python3 scripts/gpu_report.py bench --count 40 --triton 10 --out "$W"
cat "$W/steps.txt"
