#!/usr/bin/env bash
# One device call: the latency of an already-built solution (Judge session with and without the warm
# template, and a cold `kerneljudge eval`, which starts its one solution process cold), then the whole-suite
# numerics calibration after the transcendental-count change, until the call's time is used.
#
#     bash lab/h200_final_session.sh "$OUT"          # ~8.5 minutes; run from the repository root
set -u
OUT=${1:?usage: h200_final_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/final"
step latency 190 python3 scripts/latency_bench.py --out "$W/latency" --device cuda --repeats 5 --compare-cold-start \
  --cache-dir /tmp/kj-final-cache
step calibration 290 python3 scripts/calibrate_numerics.py --device cuda --preset default --jobs 12 --timeout 120 \
  --deadline-min 4.4 --out "$W/h200-numerics-calibration.md"
cat "$W/steps.txt"
