#!/usr/bin/env bash
# One device call (~5 minutes) for issue 11's open question: the end-to-end clock moves with the host launch
# time (end-to-end minus device time), which moved up to 2x between runs of the stability benchmark, quiet runs
# included. Each solution is judged by a fresh `kerneljudge eval` six times on an idle machine, with the cores'
# clocks read before and after each run (lab/launch_drift.py). Lands in OUT/launch-drift/.
#
#     bash lab/h200_launch_drift_session.sh "$OUT"          # run from the repository root
set -u
OUT=${1:?usage: h200_launch_drift_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/launch-drift"
step drift 420 python3 lab/launch_drift.py --runs 6 --out "$W" \
  --solution benchmarks/solutions/level1/39_rmsnorm__triton.py \
  --solution benchmarks/solutions/level1/90_cross_entropy__triton.py \
  --solution src/kerneljudge/data/examples/solutions/2_softmax_rows__cuda.py
cat "$W/drift.log" "$W/steps.txt"
