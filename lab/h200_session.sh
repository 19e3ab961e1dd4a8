#!/usr/bin/env bash
# One device call that checks, on an H200, what only a GPU can show of this tree: the box, every GPU fixture
# (the judge end to end: builder, two-stage box with CUDA IPC, interleaved timing, device clock, ownership
# checks), the A10 fixture under lenient, the numerics calibration with real TF32 (level 1), and a shard of
# the stability benchmark. Each step has its own time limit, so a slow step cannot take the others down;
# everything lands in OUT/session/ and in OUT/session.tar.gz (one file: the device tool returns few files).
#
#     bash lab/h200_session.sh "$OUT"          # ~9 minutes; run from the repository root
set -u
OUT=${1:?usage: h200_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/session"
CACHE=/tmp/kj-session-cache
step sandbox 40 python3 -m kerneljudge.sandbox
step fixtures 200 python3 scripts/gpu_report.py fixtures --out "$W" --cache "$CACHE"
step a10_lenient 60 python3 -m kerneljudge eval --problem tests/fixtures/problems/scale_relu.py \
  --solution tests/fixtures/solutions/gpu_hack_persisting_l2.py --policy lenient --cache-dir "$CACHE" --json
step calibration 120 python3 scripts/calibrate_numerics.py --device cuda --preset default --level 1 --jobs 8 \
  --timeout 100 --out "$W/h200-numerics-calibration-level1.md"
step stability 170 python3 scripts/stability_bench.py --runs-quiet 1 --runs-busy 1 --shard 1/3 --budget 0.5 \
  --out-dir "$W" --work-dir /tmp/kj-stability --deadline-min 2.7
tar czf "$OUT/session.tar.gz" -C "$OUT" session
cat "$W/steps.txt"
