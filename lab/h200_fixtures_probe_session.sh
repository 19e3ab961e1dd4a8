#!/usr/bin/env bash
# One device call (~7 minutes): every GPU fixture's verdict against its label with the slim CUDA headers (no
# verdict may change), then issue 11's profiler question (lab/profile_probe.py) for the one solution whose
# device clock sat 6% below its profiled call, and a Triton control. Lands in OUT/fixtures-probe/.
#
#     bash lab/h200_fixtures_probe_session.sh "$OUT"          # run from the repository root
set -u
OUT=${1:?usage: h200_fixtures_probe_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/fixtures-probe"
step fixtures 230 python3 scripts/gpu_report.py fixtures --out "$W" --cache /tmp/kj-fixtures-cache
P=src/kerneljudge/data/examples
step probe_cuda 200 python3 lab/profile_probe.py --problem $P/problems/1_gelu_scale.py \
  --solution $P/solutions/1_gelu_scale__cuda.py --out "$W/probe-gelu-scale-cuda.json"
step probe_triton 90 python3 lab/profile_probe.py --problem $P/problems/1_gelu_scale.py \
  --solution $P/solutions/1_gelu_scale__triton.py --out "$W/probe-gelu-scale-triton.json"
cat "$W/steps.txt"; head -12 "$W/fixtures.md" 2>/dev/null; cat "$W/probe_cuda.log" "$W/probe_triton.log" | tail -8
