#!/usr/bin/env bash
# One device call: does a process's launch overhead follow its memory layout? (issue 11) Six fresh processes
# time the cross-entropy problem and its Triton solution: three with address-space randomisation off and
# PYTHONHASHSEED=0 (one layout, three times), three as today (random layouts). Then the latency of an
# already-built solution (Judge session warm and cold, cold `kerneljudge eval`), and every GPU fixture's
# verdict with warm-started solution processes. Everything lands in OUT/layout/.
#
#     bash lab/h200_layout_session.sh "$OUT"          # ~9 minutes; run from the repository root
set -u
OUT=${1:?usage: h200_layout_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/layout"
CACHE=/tmp/kj-layout-cache
S=src/kerneljudge/data/problems/level1
B=benchmarks/solutions/level1
step probe_ce 120 python3 lab/e2e_probe.py --problem $S/90_cross_entropy.py --solution $B/90_cross_entropy__triton.py \
  --processes 6 --calls 240 --ways tight,pipe --aslr off,on --hash-seeds 0,random --out "$W/e2e-probe-cross-entropy.json"
step latency 190 python3 scripts/latency_bench.py --out "$W" --device cuda --repeats 5 --compare-cold-start \
  --cache-dir "$CACHE"
step fixtures 240 python3 scripts/gpu_report.py fixtures --out "$W" --cache "$CACHE"
cat "$W/steps.txt"
