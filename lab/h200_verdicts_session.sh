#!/usr/bin/env bash
# One device call after the build savings, the on-device work count and the template fix: the cold-cache
# throughput batch again (40 distinct CUDA load_inline solutions plus 10 Triton ones), then every GPU
# fixture's verdict against its label (its per-phase table shows speed_of_light for each new problem).
#
#     bash lab/h200_verdicts_session.sh "$OUT"          # ~8.5 minutes; run from the repository root
set -u
OUT=${1:?usage: h200_verdicts_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/verdicts"
step bench 260 python3 scripts/gpu_report.py bench --count 40 --triton 10 --out "$W"
step fixtures 230 python3 scripts/gpu_report.py fixtures --out "$W" --cache /tmp/kj-verdicts-cache
cat "$W/steps.txt"
