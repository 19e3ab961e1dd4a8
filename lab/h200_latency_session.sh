#!/usr/bin/env bash
# One device call for the speed issue on an H200: the end-to-end clock's launch overhead in fresh processes
# (lab/e2e_probe.py), the latency of an already-built solution with and without the warm template
# (scripts/latency_bench.py), and every GPU fixture's verdict with warm-started solution processes
# (scripts/gpu_report.py fixtures). Each step has its own time limit; everything lands in OUT/latency/.
#
#     bash lab/h200_latency_session.sh "$OUT"          # ~8 minutes; run from the repository root
set -u
OUT=${1:?usage: h200_latency_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/latency"
CACHE=/tmp/kj-latency-cache
S=src/kerneljudge/data/problems/level1
B=benchmarks/solutions/level1
step probe_ce 100 python3 lab/e2e_probe.py --problem $S/90_cross_entropy.py --solution $B/90_cross_entropy__triton.py \
  --processes 3 --calls 240 --out "$W/e2e-probe-cross-entropy.json"
step probe_relu 100 python3 lab/e2e_probe.py --problem $S/21_relu.py --solution $B/21_relu__triton.py \
  --processes 3 --calls 240 --out "$W/e2e-probe-relu.json"
step latency 240 python3 scripts/latency_bench.py --out "$W" --device cuda --repeats 5 --compare-cold-start \
  --cache-dir "$CACHE"
step fixtures 200 python3 scripts/gpu_report.py fixtures --out "$W" --cache "$CACHE"
cat "$W/steps.txt"
