#!/usr/bin/env bash
# One device call (~8 minutes) after the slim CUDA headers (judging/build/slim_headers.py): the cold-cache
# throughput batch (40 CUDA load_inline + 10 Triton; each verdict's `builds` says which headers served), then
# each compile job of one published-style solution alone (scripts/build_units.py: as written, lean, slim).
# Lands in OUT/slim/.
#
#     bash lab/h200_slim_session.sh "$OUT"          # run from the repository root
set -u
OUT=${1:?usage: h200_slim_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/slim"
step bench 280 python3 scripts/gpu_report.py bench --count 40 --triton 10 --out "$W"
step units 230 python3 scripts/build_units.py --out "$W" --solution benchmarks/solutions/level1/21_relu__cuda.py
cat "$W/steps.txt" "$W/build-units.md" 2>/dev/null; head -16 "$W/bench.md" 2>/dev/null; tail -3 "$W/bench.log"
